"""Section 26, the call-in queue, from the Python client: the harness helpers and the two pushes."""
import asyncio

import pytest

from roomd import RpcError


def test_a_call_in_through_the_queue(roomd_factory):
    roomd = roomd_factory(clock="manual")  # on-stage-queue comes every interval_ms (1 s) of its clock

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        producer = await roomd.join("show", "mod-1", "moderator")
        viewer = await roomd.join("show", "v-1", "viewer")
        troll = await roomd.join("show", "t-1", "viewer")

        asked = await viewer.ask_to_join_stage("about the tour")
        assert asked["status"] == "waiting" and asked["position"] == 1 and asked["note"] == "about the tour"
        assert await viewer.next_stage_status() == asked  # creating it is a status change
        roomd.advance(1)
        for moderating in (host, producer):  # one queue, the same push to each
            queue = await moderating.next_stage_queue()
            assert queue == {"changed": [asked], "removed": [], "waiting": 1}
        listed = await host.stage_queue()
        assert listed == {"requests": [asked], "total": 1}

        invited = await producer.invite(listed["requests"][0])
        assert invited["request"]["status"] == "invited" and invited["request"]["role"] == "guest"
        offer = await viewer.next("on-role-change-request")
        assert offer["token"] == invited["token"]
        assert (await viewer.next_stage_status("invited"))["invited_by"]["peer_id"] == producer.peer_id
        assert (await viewer.role_change(offer["token"]))["role"] == "guest"
        live = await viewer.next_stage_status("live")
        assert live["request_id"] == asked["request_id"] and live["peer"]["role"] == "guest"
        roomd.advance(1)
        queue = await host.next_stage_queue(where=lambda params: params["changed"])
        assert [r["status"] for r in queue["changed"]] == ["live"] and queue["waiting"] == 0

        await troll.ask_to_join_stage()
        await host.stage_block("t-1")
        assert (await troll.next_stage_status("declined"))["user_id"] == "t-1"
        with pytest.raises(RpcError) as blocked:
            await troll.ask_to_join_stage("let me on")
        assert blocked.value.code == 40303

        await host.role_change_request(viewer.peer_id, "viewer", force=True)  # back to the audience
        assert (await viewer.next_stage_status("done"))["request_id"] == asked["request_id"]
        roomd.advance(1)
        removed = await producer.next_stage_queue(where=lambda params: asked["request_id"] in params["removed"])
        assert removed["changed"] == []
        for client in (host, producer, viewer, troll):
            await client.close()

    asyncio.run(scenario())
