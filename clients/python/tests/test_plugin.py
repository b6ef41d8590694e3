"""The pytest plugin itself, run in a separate pytest process."""
import asyncio

import pytest

from roomd.webhooks import verify
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


def test_a_scripted_error_answers_the_next_call_and_changes_nothing(roomd_factory):
    """Test mode II (section 33): the app's error path without contriving the state."""
    roomd = roomd_factory(clock="manual")

    async def scenario():
        from roomd import RpcError
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "viewer-1", "viewer")
        roomd.fail_next("stage-request", 40907, message="the queue is full", peer_id=viewer.peer_id)
        assert roomd.faults() == [{"method": "stage-request", "peer_id": viewer.peer_id,
                                   "error": {"code": 40907, "message": "the queue is full"}, "left": 1}]
        with pytest.raises(RpcError) as refused:
            await viewer.ask_to_join_stage("hello")
        assert refused.value.code == 40907 and "the queue is full" in str(refused.value)
        assert (await host.stage_queue())["total"] == 0, "the scripted call changed nothing"
        assert roomd.faults() == []
        assert (await viewer.ask_to_join_stage("hello"))["status"] == "waiting"
        for client in (host, viewer):
            await client.close()

    asyncio.run(scenario())


def test_push_faults_and_a_synthetic_audience(roomd_factory):
    """Test mode II (section 33): a push dropped by name, and 300 socketless viewers whose taps and
    stage requests the real host sees, chosen the same way on every run."""
    roomd = roomd_factory(clock="manual", seed=3)

    async def scenario():
        from roomd import UnknownPush
        host = await roomd.join("show", "host-1", "host")
        with pytest.raises(UnknownPush, match="did you mean on-peer-join"):
            roomd.drop_next("on-peer-joined")
        roomd.drop_next("on-peer-join")
        added = roomd.add_audience("show", 300)
        assert added["count"] == 300 and len(added["peer_ids"]) == 300
        taps = roomd.audience_act("show", "react", 200, {"target": "stream", "type": "fire"})
        assert taps == {"done": 200, "errors": {}, "messages": {}}
        roomd.advance(1)
        reactions = await host.next("on-reactions")
        assert {"target": "stream", "type": "fire", "total": 200} in reactions["counts"]
        assert roomd.audience_act("show", "stage-request", 12, {"note": "me!"})["done"] == 12
        assert (await host.stage_queue())["total"] == 12
        refused = roomd.audience_act("show", "question-vote", 2, {"question_id": "nope"})
        assert refused["done"] == 0 and sum(refused["errors"].values()) == 2
        assert roomd.remove_audience("show") == 300
        await host.close()

    asyncio.run(scenario())


def test_the_journal_lists_the_session(roomd_factory):
    roomd = roomd_factory(clock="manual", seed=5)

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        guest = await roomd.join("show", "guest-1", "guest")
        await host.broadcast("hi")
        await guest.next("on-broadcast")
        for client in (host, guest):
            await client.close()

    asyncio.run(scenario())
    journal = roomd.journal("show")
    assert [line["kind"] for line in journal][:2] == ["call", "answer"]
    assert journal[0]["params"]["token"] == "<redacted>"
    assert any(line["kind"] == "push" and line.get("method") == "on-broadcast" for line in journal)


def test_the_webhook_sink_and_verify_against_real_deliveries(roomd_factory, webhook_sink):
    roomd = roomd_factory(webhooks=webhook_sink)

    async def scenario():
        host = await roomd.join("show", "ada", "host", name="Ada")
        opened = await webhook_sink.next()
        assert opened["type"] == "session.open.success" and opened["data"]["room_id"] == "show"
        joined = await webhook_sink.next("peer.join.success")
        assert joined["data"]["user_id"] == "ada" and joined["data"]["peer_id"] == host.peer_id
        await host.leave()
        assert (await webhook_sink.next("session.close.success"))["data"]["room_id"] == "show"
        with pytest.raises(TimeoutError, match="waiting for webhook room.end.success; received so far: "
                                               "session.open.success, peer.join.success, peer.leave.success"):
            await webhook_sink.next("room.end.success", timeout=0.2)

    asyncio.run(scenario())
    request = webhook_sink.requests[1]
    body, headers = request["body"], request["headers"]
    checked = verify(body, headers, roomd.secret)
    assert checked and checked.event["type"] == "peer.join.success" and checked.reason is None
    assert verify(body + b" ", headers, roomd.secret).reason.startswith("the signature does not match")
    assert "without its trailing newline" in verify(body, headers, roomd.secret + b"\n").reason
    stale = verify(body, headers, roomd.secret, now_ms=int(headers["X-Roomd-Timestamp"]) + 600_000)
    assert not stale and stale.reason.startswith("stale: X-Roomd-Timestamp is 600 s old")
    assert verify(body, {}, roomd.secret).reason == "no X-Roomd-Timestamp header"
