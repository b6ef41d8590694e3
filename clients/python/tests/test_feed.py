"""The audience feed reader (PROTOCOL.md section 24) against the real daemon, on its manual clock."""
import asyncio

import pytest

from roomd import FeedError, FeedReader


def test_spans_are_whole_seconds_on_a_three_second_grid():
    now = [1_000_000.7]
    reader = FeedReader("http://127.0.0.1:1", "show", clock=lambda: now[0])
    assert reader.spans_due() == [(999_996, 999_999)]  # floored, on the grid: every viewer asks the same
    reader.last_to = 999_999
    now[0] += 1
    assert reader.spans_due() == []  # the next grid point is not reached yet
    now[0] += 2
    assert reader.spans_due() == [(999_999, 1_000_002)]
    now[0] += 200  # a long stall: caught up in pieces of at most 60 s
    spans = reader.spans_due()
    assert spans[0][0] == 999_999 and all(0 < b - a <= 60 for a, b in spans)
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    assert spans[-1][1] % 3 == 0
    with pytest.raises(ValueError):
        FeedReader("http://x", "show", interval=0)


def test_the_reader_yields_what_the_room_did(roomd_factory):
    roomd = roomd_factory(clock="manual")

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "viewer-1", "viewer")
        reader = roomd.feed("show", token=roomd.token("show", "viewer-1", "viewer"))
        roomd.advance(3)
        await host.call("broadcast", {"info": {"message": "hello"}})
        await host.call("hls-start")
        await viewer.call("react", {"target": "stream", "type": "fire", "count": 2})
        spans = []
        async for span in reader:
            spans.append(span)
            if len(spans) == 4:
                await host.call("end-room", {"reason": "show over"})
        chat = [m["info"]["message"] for s in spans for m in s["chat"]]
        assert chat == ["hello"]
        assert any(s["stream"] and s["stream"]["state"] == "live" for s in spans)
        assert [r for s in spans for r in s["reactions"]] == [{"target": "stream", "type": "fire", "total": 2}]
        assert all(s["to"] - s["from"] == 3 and s["to"] % 3 == 0 for s in spans)
        assert all(spans[i]["to"] == spans[i + 1]["from"] for i in range(len(spans) - 1)), "no gap, no overlap"
        assert spans[-1]["ended"] is True and reader.ended
        await viewer.close()

    asyncio.run(scenario())


def test_errors_carry_the_status_and_code(roomd_factory):
    roomd = roomd_factory(clock="manual")

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        roomd.advance(6)
        now = roomd.clock() // 1000
        other_room = FeedReader(roomd.http_url, "show", roomd.token("other", "v", "viewer"))
        with pytest.raises(FeedError) as denied:
            other_room.fetch(now - 3, now)
        assert (denied.value.status, denied.value.code) == (403, 40300)
        with pytest.raises(FeedError) as future:
            roomd.feed("show").fetch(now, now + 3)
        assert (future.value.status, future.value.code) == (400, -32602)
        assert future.value.message.startswith("to:")
        reader = roomd.feed("show")
        first = reader.fetch(now - 3, now)
        assert reader.fetch(now - 3, now) == first  # a 304 answered from the ETag it kept
        await host.close()

    asyncio.run(scenario())


def test_the_reader_keeps_its_connection_and_reopens_a_closed_one(roomd_factory):
    roomd = roomd_factory(clock="manual")

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        roomd.advance(9)
        now = roomd.clock() // 1000
        reader = roomd.feed("show")
        reader.fetch(now - 6, now - 3)
        kept = reader._connection.sock
        reader.fetch(now - 3, now)
        assert reader._connection.sock is kept, "the second poll used the first poll's connection"
        kept.shutdown(2)  # as roomd closes a connection idle for 5 s
        assert reader.fetch(now - 6, now - 3)["to"] == now - 3, "a closed connection is opened again"
        assert reader._connection.sock is not kept
        reader.close()
        await host.close()

    asyncio.run(scenario())
