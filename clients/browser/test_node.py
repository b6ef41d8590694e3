"""roomd.js under Node (its global WebSocket: Node 22+, or 20 with --experimental-websocket).

Skipped when no such Node is installed (Debian 12's nodejs 18 has no WebSocket)."""
import asyncio
import json
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
        await host.next(lambda p: p["method"] == "on-peer-update" and p["params"]["changed"] == ["role"])
        await host.peer_leave_request(joined["peer"]["peer_id"])
        stdout, stderr = await asyncio.wait_for(node.communicate(), 20)
        await host.close()
        assert node.returncode == 0, stderr.decode()
        return json.loads(stdout)

    assert asyncio.run(scenario()) == {"role": "viewer", "error": 40300, "newRole": "guest", "closeCode": 4001}
