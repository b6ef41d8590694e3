"""The README's operator CLI block ("The same from `roomd` itself"), run verbatim with bash against a
live daemon: a host and a viewer in room "show", the viewer asking to come on stage, PORT, SECRET,
PEER_ID and REQUEST_ID set as the README assumes."""
import asyncio
import os
import re
import subprocess
from pathlib import Path

from readme_snippets import README


def cli_block() -> str:
    text = README.read_text()
    start = text.index("The same from `roomd` itself")
    match = re.compile(r"```sh\n(.*?)```", re.S).search(text, start)
    assert match and "roomd rooms list" in match.group(1)
    return match.group(1)


def test_readme_operator_cli_block_runs(roomd, tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(roomd.secret)

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "fan-1", "viewer")
        request = await viewer.ask_to_join_stage("a question about the tour")
        env = dict(os.environ, PORT=str(roomd.port), SECRET=str(secret), PEER_ID=viewer.peer_id,
                   REQUEST_ID=request["request_id"],
                   PATH=f"{Path(roomd.binary).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        run = await asyncio.create_subprocess_exec(
            "bash", "-euo", "pipefail", "-c", cli_block(), env=env,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(run.communicate(), 60)
        assert run.returncode == 0, (out + err).decode()
        lines = out.decode().splitlines()
        assert lines[0].startswith("show") and "2 peers" in lines[0], lines[0]
        assert await host.close_code() == 4002, "rooms end ended the room"
        await viewer.close()

    asyncio.run(scenario())
