"""The pytest plugin itself, run in a separate pytest process."""
import asyncio

import pytest
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


def test_a_manual_clock_moves_the_grace_and_the_request_expiry(roomd_factory):
    """Test mode (PROTOCOL.md section 25): no sleeping through a 20-s grace or a 60-s request."""
    roomd = roomd_factory(clock="manual", seed=7)

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "viewer-1", "viewer")
        guest = await roomd.join("show", "guest-1", "guest")
        await host.next("on-peer-join")
        await host.next("on-peer-join")
        await host.call("role-change-request", {"requested_for": viewer.peer_id, "role": "guest"})
        await viewer.next("on-role-change-request")
        await guest.abort()
        start = roomd.clock()
        assert roomd.advance(19.999) == start + 19_999
        with pytest.raises(TimeoutError):
            await host.next("on-peer-leave", timeout=0.3)
        roomd.advance(0.001)
        assert (await host.next("on-peer-leave"))["reason"] == "websocket closed"
        roomd.advance(40)
        assert (await host.next("on-role-change-rejected"))["reason"] == "expired"
        with pytest.raises(RuntimeError, match="the clock does not go back"):
            roomd.set_clock(start)
        for client in (host, viewer):
            await client.close()

    asyncio.run(scenario())


def test_faults_drop_close_and_stall_like_the_real_thing(roomd_factory):
    roomd = roomd_factory(clock="manual")

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        guest = await roomd.join("show", "guest-1", "guest")
        await host.next("on-peer-join")
        assert roomd.fault("drop", peer_id=guest.peer_id, count=1) == [guest.peer_id]
        await host.broadcast("lost")
        await host.broadcast("kept")
        assert (await guest.next("on-broadcast"))["info"]["message"] == "kept"
        roomd.fault("stall", user_id="guest-1", ms=3000)
        await host.broadcast("later")
        with pytest.raises(TimeoutError):
            await guest.next("on-broadcast", timeout=0.3)
        roomd.advance(3)
        assert (await guest.next("on-broadcast"))["info"]["message"] == "later"
        roomd.fault("close", peer_id=guest.peer_id)
        assert await guest.close_code() == 1006
        with pytest.raises(RuntimeError, match="reconnect grace"):
            roomd.fault("close", peer_id=guest.peer_id)
        roomd.clear_faults()
        await host.close()

    asyncio.run(scenario())
