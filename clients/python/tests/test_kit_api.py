"""One API in three languages (issue 25, item 2): every call of docs/openrpc.json has a helper in the
Swift, Python and roomd.js kits, named as docs/KITS.md says; a method added to the protocol fails here
until each kit has it (scripts/kit-methods.py writes the Python and JS ones and the table)."""
import asyncio
import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from roomd import RoomClient

REPO = Path(__file__).resolve().parents[3]
spec = importlib.util.spec_from_file_location("kit_methods", REPO / "scripts" / "kit-methods.py")
kit_methods = importlib.util.module_from_spec(spec)
spec.loader.exec_module(kit_methods)
CALLS = [method["name"] for method in kit_methods.calls()]


def test_the_generated_helpers_types_and_table_are_current():
    check = subprocess.run([sys.executable, str(REPO / "scripts" / "kit-methods.py"), "--check"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    table = (REPO / "docs" / "KITS.md").read_text()
    for name in CALLS:
        assert f"| `{name}` |" in table, f"docs/KITS.md has no row for {name}"


def test_python_has_a_helper_for_every_call():
    assert len(CALLS) >= 60
    missing = [name for name in CALLS if not callable(getattr(RoomClient, kit_methods.snake(name), None))]
    assert not missing, f"the Python kit has no helper for {missing}: run scripts/kit-methods.py"


def test_swift_has_a_method_for_every_call():
    sources = "\n".join(path.read_text() for path in (REPO / "Sources" / "RoomClient").glob("*.swift"))
    missing = []
    for name in CALLS:
        listed = kit_methods.SWIFT_NAMES.get(name)
        assert listed, f"no Swift name for {name} in scripts/kit-methods.py's SWIFT_NAMES"
        for base in re.findall(r"[A-Za-z]+", listed):
            if not re.search(rf"public func {base}[(<]", sources):
                missing.append(f"{name}: {base}")
    assert not missing, f"Sources/RoomClient lacks {missing}"


@pytest.mark.skipif(shutil.which("node") is None, reason="no node")
def test_roomd_js_has_a_helper_for_every_call():
    module = REPO / "Sources" / "RoomServer" / "Client" / "roomd.js"
    listing = subprocess.run(["node", "--input-type=module", "-e",
                              f"const m = await import({json.dumps(module.as_uri())});"
                              "console.log(JSON.stringify(Object.getOwnPropertyNames(m.RoomClient.prototype)))"],
                             capture_output=True, text=True, check=True)
    methods = set(json.loads(listing.stdout))
    missing = [name for name in CALLS if kit_methods.camel(name) not in methods]
    assert not missing, f"roomd.js has no helper for {missing}: run scripts/kit-methods.py"


def test_generated_python_helpers_send_their_params(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer")
        await viewer.listen_metadata_change(["pinned"])
        entry = await host.set_metadata("pinned", {"text": "hi"})
        assert entry["key"] == "pinned" and entry["value"] == {"text": "hi"}
        assert (await viewer.next("on-metadata-change"))["entries"][0]["value"] == {"text": "hi"}
        assert (await host.get_metadata(key="pinned"))["value"] == {"text": "hi"}
        await host.set_metadata("pinned", None)   # a required param goes out as null: deletes
        assert (await host.get_metadata())["entries"] == []
        preview = await (await roomd.connect()).preview(roomd.token("show", "v-2", "viewer"))
        assert preview["room"]["room_id"] == "show" and preview["policy"]["name"] == "viewer"
        poll = await host.poll_info_set("Best act?", "poll")
        poll_id = poll["poll_id"]
        await host.poll_questions_set(poll_id, [{"question": {"text": "Who?", "type": "single-choice"},
                                                 "options": [{"text": "A"}, {"text": "B"}]}])
        await host.poll_start(poll_id)
        await viewer.poll_response(poll_id, [{"question": 1, "option": 1}])
        assert (await host.poll_result(poll_id))["total_response"] == 1
        mine = await viewer.poll_responses(poll_id, own=True)
        assert len(mine["responses"]) == 1
        await host.hls_start()
        assert (await viewer.next("on-hls-update"))["running"] is True
        await host.hls_stop()
        await host.close()
        await viewer.close()

    asyncio.run(scenario())


def test_every_kit_lists_the_pushes_of_openrpc():
    """The push names with which next(method) refuses a misspelled push (issue 38) are docs/openrpc.json's."""
    import roomd
    pushes = set(kit_methods.pushes())
    assert len(pushes) >= 30
    assert set(roomd.PUSHES) == pushes, "clients/python/roomd/pushes.py is stale: run scripts/kit-methods.py"
    swift = (REPO / "Sources" / "RoomProtocol" / "PushNames.swift").read_text()
    assert set(re.findall(r'^ +"([a-z-]+)",$', swift, re.M)) == pushes, \
        "Sources/RoomProtocol/PushNames.swift is stale: run scripts/kit-methods.py"
    if shutil.which("node"):
        module = REPO / "Sources" / "RoomServer" / "Client" / "roomd.js"
        listing = subprocess.run(["node", "--input-type=module", "-e",
                                  f"const m = await import({json.dumps(module.as_uri())});"
                                  "console.log(JSON.stringify(m.PUSH_NAMES))"],
                                 capture_output=True, text=True, check=True)
        assert set(json.loads(listing.stdout)) == pushes, "roomd.js's PUSH_NAMES is stale: run scripts/kit-methods.py"


def test_every_kit_has_each_test_mode_helper():
    """Test mode (sections 25 and 33) through the same helpers in the three kits (docs/KITS.md)."""
    from roomd import RoomdProcess
    swift = "\n".join(path.read_text() for path in (REPO / "Sources" / "RoomdTesting").glob("*.swift"))
    js = (REPO / "Sources" / "RoomServer" / "Client" / "roomd.js").read_text()
    js_class = js[js.index("export class RoomdTestMode"):]
    missing = []
    for route, swift_name, python_name, js_name in kit_methods.TEST_MODE_HELPERS:
        if not re.search(rf"public func {swift_name}[(<]", swift):
            missing.append(f"Swift {swift_name} ({route})")
        if not callable(getattr(RoomdProcess, python_name, None)):
            missing.append(f"Python {python_name} ({route})")
        if not re.search(rf"^  async {js_name}\(", js_class, re.M):
            missing.append(f"roomd.js {js_name} ({route})")
    assert not missing, missing


def test_the_daemon_and_its_kits_share_one_version():
    """One version for roomd, the Python kit and roomd.js (issue 38: the Python package said 0.1.0)."""
    daemon = re.search(r'let roomdVersion = "roomd ([0-9.]+)', (REPO / "Sources" / "roomd" / "Roomd.swift").read_text())
    python = re.search(r'^version = "([0-9.]+)"', (REPO / "clients" / "python" / "pyproject.toml").read_text(), re.M)
    js = json.loads((REPO / "Sources" / "RoomServer" / "Client" / "package.json").read_text())["version"]
    assert daemon and python and daemon.group(1) == python.group(1) == js, (daemon, python, js)
