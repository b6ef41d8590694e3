"""The pytest plugin itself, run in a separate pytest process."""
from readme_snippets import run_as_pytest

FAILING = '''
import asyncio

def test_fails(roomd):
    async def scenario():
        client = await roomd.join("show", "host-1", "host")
        await client.close()
    asyncio.run(scenario())
    assert False, "on purpose"
'''


def test_a_failing_test_shows_roomd_stderr(tmp_path):
    result = run_as_pytest(FAILING, tmp_path, "test_failing.py")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "roomd stderr" in result.stdout
    assert "peer joined" in result.stdout          # roomd's own log line for the join


def test_a_passing_test_shows_nothing(tmp_path):
    result = run_as_pytest(FAILING.replace("assert False", "assert True"), tmp_path, "test_passing.py")
    assert result.returncode == 0 and "roomd stderr" not in result.stdout, result.stdout
