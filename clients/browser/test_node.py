"""roomd.js under Node (its global WebSocket: Node 22+, or 20 with --experimental-websocket).

Skipped when no such Node is installed (Debian 12's nodejs 18 has no WebSocket)."""
import asyncio
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

MODULE = Path(__file__).resolve().parents[2] / "Sources" / "RoomServer" / "Client" / "roomd.js"

SCRIPT = """
const { RoomClient, RoomError } = await import(process.argv[1]);
const [url, token] = process.argv.slice(2);
const out = {};
const client = await RoomClient.connect(url);
out.role = (await client.join({ token, name: "Node" })).peer.role;
try { await client.trackAdd({ type: "video" }); } catch (e) { out.error = e instanceof RoomError ? e.code : String(e); }
const offer = await client.next("on-role-change-request", { timeout: 10000 });
out.newRole = (await client.roleChange(offer.token)).role;
out.closeCode = await client.closeCode();   // the host removes this peer next: 4001
console.log(JSON.stringify(out));
"""


def node_command():
    node = shutil.which("node")
    if not node:
        return None
    for flags in ([], ["--experimental-websocket"]):
        probe = subprocess.run([node, *flags, "-e", "process.exit(typeof WebSocket === 'function' ? 0 : 1)"],
                               capture_output=True)
        if probe.returncode == 0:
            return [node, *flags]
    return None


@pytest.mark.skipif(node_command() is None, reason="no Node with a global WebSocket")
def test_roomd_js_runs_under_node(roomd):
    async def scenario():
        node = await asyncio.create_subprocess_exec(
            *node_command(), "--input-type=module", "-e", SCRIPT, MODULE.as_uri(), roomd.url,
            roomd.token("show", "node-1", "viewer"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        host = await roomd.join("show", "host-1", "host")
        joined = await host.next("on-peer-join", timeout=10)
        await host.role_change_request(joined["peer"]["peer_id"], "guest")
        await host.next("on-peer-update", where=lambda p: p["changed"] == ["role"])
        await host.peer_leave_request(joined["peer"]["peer_id"])
        stdout, stderr = await asyncio.wait_for(node.communicate(), 20)
        await host.close()
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout)

    assert asyncio.run(scenario()) == {"role": "viewer", "error": 40300, "newRole": "guest", "closeCode": 4001}


WAIT_SCRIPT = """
const { RoomClient, TimeoutError } = await import(process.argv[1]);
const [url, token] = process.argv.slice(2);
const out = {};
const client = await RoomClient.connect(url);
await client.join({ token });
const first = await client.next("on-broadcast", { timeout: 10000 });   // the guest is in and has spoken twice
out.where = (await client.next("on-broadcast", { where: (p) => p.info.message === "two" })).info.message;
try {
  await client.next("on-role-change-request", { timeout: 300 });
} catch (e) {
  out.isTimeout = e instanceof TimeoutError;
  out.message = e.message;
  out.waitedFor = e.waitedFor;
  out.queuedCount = e.queuedCount;
}
const wanted = function goodbye(p) { return p.info.message === "goodbye"; };
try { await client.next("on-broadcast", { where: wanted, timeout: 100 }); } catch (e) { out.named = e.waitedFor; }
await client.close();
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(node_command() is None, reason="no Node with a global WebSocket")
def test_a_roomd_js_timeout_says_what_it_waited_for_and_what_is_queued(roomd):
    async def scenario():
        watcher = await roomd.join("show", "watch-1", "host")   # sees the Node host join before the guest does
        host_token = roomd.token("show", "host-1", "host")
        node = await asyncio.create_subprocess_exec(
            *node_command(), "--input-type=module", "-e", WAIT_SCRIPT, MODULE.as_uri(), roomd.url, host_token,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        await watcher.next("on-peer-join", timeout=10)
        guest = await roomd.join("show", "guest-1", "guest")
        await guest.broadcast("one")
        await guest.broadcast("two")
        await guest.broadcast("three")
        stdout, stderr = await asyncio.wait_for(node.communicate(), 20)
        await guest.close()
        await watcher.close()
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout), guest.peer_id

    out, guest_id = asyncio.run(scenario())
    assert out["where"] == "two", "the where predicate gets the params"
    assert out["isTimeout"] and out["waitedFor"] == "on-role-change-request"
    # Still queued: the guest's join and its third message (the first was taken, the second matched).
    assert out["queuedCount"] == 2
    assert out["message"].startswith("timed out after 300 ms waiting for on-role-change-request; 2 entries queued: "
                                     "on-peer-join {"), out["message"]
    assert guest_id in out["message"] and 'on-broadcast {"message_id":' in out["message"]
    assert out["named"] == "on-broadcast where goodbye"


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_the_types_declare_every_export_and_method_and_npm_packs_them():
    listing = subprocess.run(["node", "--input-type=module", "-e",
                              f"const m = await import({json.dumps(MODULE.as_uri())});"
                              "console.log(JSON.stringify({exports: Object.keys(m),"
                              " methods: Object.getOwnPropertyNames(m.RoomClient.prototype),"
                              " statics: Object.getOwnPropertyNames(m.RoomClient)}))"],
                             capture_output=True, text=True, check=True)
    found = json.loads(listing.stdout)
    types = (MODULE.parent / "roomd.d.ts").read_text()
    for name in found["exports"]:
        declared = name == "default" and "export default RoomClient;" in types
        assert declared or re.search(rf"export (const|class|function|type|interface) {name}\b", types), \
            f"roomd.d.ts does not declare the export {name}: run scripts/kit-methods.py"
    public = [m for m in found["methods"] if m != "constructor" and not m.startswith("_")]
    assert len(public) > 70
    for name in public:
        assert re.search(rf"^  {name}\(", types, re.M), f"roomd.d.ts does not declare RoomClient.{name}"
    assert re.search(r"^  static connect\(", types, re.M)
    if shutil.which("npm"):
        packed = subprocess.run(["npm", "pack", "--dry-run", "--json"], cwd=MODULE.parent, capture_output=True,
                                text=True, check=True)
        package = json.loads(packed.stdout)[0]
        assert package["name"] == "roomd-client"
        assert {"roomd.js", "roomd.d.ts", "package.json"} <= {f["path"] for f in package["files"]}
    manifest = json.loads((MODULE.parent / "package.json").read_text())
    assert manifest["types"] == "./roomd.d.ts" and manifest["exports"]["."]["default"] == "./roomd.js"
    tsc = shutil.which("tsc")
    if tsc:  # a real type check where TypeScript is installed (not needed for make test)
        check = subprocess.run([tsc, "--noEmit", "--strict", str(MODULE.parent / "roomd.d.ts")],
                               capture_output=True, text=True)
        assert check.returncode == 0, check.stdout


STAGE_SCRIPT = """
const { RoomClient, RoomError } = await import(process.argv[1]);
const [url, viewerToken, producerToken, trollToken] = process.argv.slice(2);
const out = {};
const connect = async (token) => { const c = await RoomClient.connect(url); await c.join({ token }); return c; };
const [viewer, producer, troll] = [await connect(viewerToken), await connect(producerToken), await connect(trollToken)];
const asked = await viewer.askToJoinStage("from node");
out.asked = [asked.status, asked.position, asked.note];
out.created = (await viewer.nextStageStatus()).status;
const queue = await producer.nextStageQueue({ where: (p) => p.waiting === 1, timeout: 10000 });
out.queue = [queue.changed.map((r) => r.note), queue.removed, queue.waiting];
const listed = await producer.stageQueue();
out.total = listed.total;
const invited = await producer.invite(listed.requests[0]);
const offer = await viewer.next("on-role-change-request", { timeout: 10000 });
out.sameToken = offer.token === invited.token;
out.invited = (await viewer.nextStageStatus("invited")).invited_by.role;
await viewer.roleChange(offer.token);
out.live = (await viewer.nextStageStatus("live")).peer.role;
await producer.stageBlock("t-1");
try { await troll.askToJoinStage(); } catch (e) { out.blocked = e instanceof RoomError ? e.code : String(e); }
try { await viewer.nextStageStatus("done", { timeout: 100 }); } catch (e) { out.waitedFor = e.waitedFor; }
for (const client of [viewer, producer, troll]) await client.close();
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(node_command() is None, reason="no Node with a global WebSocket")
def test_roomd_js_scripts_a_call_in_through_the_queue(roomd):
    async def scenario():
        node = await asyncio.create_subprocess_exec(
            *node_command(), "--input-type=module", "-e", STAGE_SCRIPT, MODULE.as_uri(), roomd.url,
            roomd.token("show", "v-1", "viewer"), roomd.token("show", "mod-1", "moderator"),
            roomd.token("show", "t-1", "viewer"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(node.communicate(), 30)
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout)

    assert asyncio.run(scenario()) == {
        "asked": ["waiting", 1, "from node"], "created": "waiting", "queue": [["from node"], [], 1], "total": 1,
        "sameToken": True, "invited": "moderator", "live": "guest", "blocked": 40303,
        "waitedFor": 'on-stage-status where status == "done"'}


UNKNOWN_PUSH_SCRIPT = """
const { RoomClient, UnknownPushError } = await import(process.argv[1]);
const [url, token] = process.argv.slice(2);
const out = {};
const client = await RoomClient.connect(url);
await client.join({ token });
const started = Date.now();
try { await client.next("on-role-change-requested", { timeout: 30000 }); } catch (e) {
  out.isUnknown = e instanceof UnknownPushError;
  out.message = e.message;
  out.suggestions = e.suggestions;
}
out.elapsedMs = Date.now() - started;
try { await client.next("peer-join", { where: () => true, timeout: 30000 }); } catch (e) { out.suffix = e.suggestions; }
await client.close();
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(node_command() is None, reason="no Node with a global WebSocket")
def test_roomd_js_refuses_a_misspelled_push_at_once_naming_the_close_ones(roomd):
    async def scenario():
        node = await asyncio.create_subprocess_exec(
            *node_command(), "--input-type=module", "-e", UNKNOWN_PUSH_SCRIPT, MODULE.as_uri(), roomd.url,
            roomd.token("show", "host-1", "host"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(node.communicate(), 20)
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout)

    out = asyncio.run(scenario())
    assert out["isUnknown"] and out["elapsedMs"] < 1000, out
    assert out["message"] == ('unknown push "on-role-change-requested": did you mean on-role-change-request, '
                              'on-role-change-rejected?')
    assert out["suggestions"] == ["on-role-change-request", "on-role-change-rejected"]
    assert out["suffix"] == ["on-peer-join"]


TEST_MODE_SCRIPT = """
const { RoomClient, RoomdTestMode, TestModeError, UnknownPushError } = await import(process.argv[1]);
const [url, httpURL, token, management] = process.argv.slice(2);
const out = {};
const roomd = new RoomdTestMode(httpURL, { token: management });
const host = await RoomClient.connect(url);
await host.join({ token });
try { await roomd.dropNext("on-peer-joined"); } catch (e) { out.unknown = e instanceof UnknownPushError; }
await roomd.dropNext("on-peer-join");
out.added = (await roomd.addAudience("show", 50, { seed: 9 })).count;
out.taps = await roomd.audienceAct("show", "react", 40, { target: "stream", type: "clap" });
await roomd.advance(1000);
out.total = (await host.next("on-reactions")).counts.find(c => c.type === "clap").total;
out.asked = (await roomd.audienceAct("show", "stage-request", 5, { note: "hi" })).done;
out.queue = (await host.stageQueue()).total;
out.removed = await roomd.removeAudience("show");
try { await roomd.audienceAct("show", "fly", 1); } catch (e) {
  out.refused = e instanceof TestModeError ? [e.status, e.code, e.message.includes("action: one of")] : String(e);
}
out.faults = await roomd.faults();
await host.close();
console.log(JSON.stringify(out));
"""


@pytest.mark.skipif(node_command() is None, reason="no Node with a global WebSocket")
def test_roomd_js_drives_test_mode_ii(roomd_factory):
    """RoomdTestMode (roomd.js): push faults by name and a synthetic audience (section 33)."""
    roomd = roomd_factory(clock="manual")

    async def scenario():
        node = await asyncio.create_subprocess_exec(
            *node_command(), "--input-type=module", "-e", TEST_MODE_SCRIPT, MODULE.as_uri(), roomd.url,
            roomd.http_url, roomd.token("show", "host-1", "host"), roomd.management_token(),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(node.communicate(), 30)
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout)

    assert asyncio.run(scenario()) == {
        "unknown": True, "added": 50, "taps": {"done": 40, "errors": {}, "messages": {}}, "total": 40, "asked": 5,
        "queue": 5, "removed": 50, "refused": [400, -32602, True], "faults": []}


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_without_a_websocket_roomd_js_says_how_to_get_one():
    """Node 20 without --experimental-websocket: the error names the flag (issue 38's friction)."""
    node = shutil.which("node")
    script = ("const { RoomClient } = await import(process.argv[1]);"
              "try { await RoomClient.connect('ws://127.0.0.1:9/ws', { WebSocket: null }); }"
              " catch (e) { console.log(e.message); }")
    out = subprocess.run([node, "--input-type=module", "-e", script, MODULE.as_uri()],
                         capture_output=True, text=True, timeout=20)
    assert "Node 20 with --experimental-websocket" in out.stdout, out.stdout + out.stderr
