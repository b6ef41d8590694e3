"""Section 22 from the Python client: bans, chat bans, the chat's state, reports."""
import asyncio

import pytest

from roomd import RpcError


def test_moderation_helpers(roomd):
    async def scenario():
        host = await roomd.join("mod", "ada", "host")
        guest = await roomd.join("mod", "cy", "guest")
        viewer = await roomd.join("mod", "bob", "viewer")
        joined = await (await roomd.connect()).join(roomd.token("mod", "eve", "viewer"))
        assert joined["chat"]["state"] == {"paused": False, "slow_mode_s": 0, "chat_banned": False, "until": None}

        assert await host.chat_state(slow_mode_s=10) == {"paused": False, "slow_mode_s": 10}
        assert (await guest.next("on-chat-state"))["slow_mode_s"] == 10
        await guest.broadcast("one")
        with pytest.raises(RpcError) as slow:
            await guest.broadcast("two")
        assert slow.value.code == 42901 and 0 < slow.value.data["retry_after_ms"] <= 10000
        await host.chat_state(slow_mode_s=0)

        await host.chat_ban(user_id="bob", duration_s=60)
        state = await viewer.next("on-chat-state", where=lambda params: params["chat_banned"])
        assert state["until"] is not None
        with pytest.raises(RpcError) as closed:
            await viewer.broadcast("hi")
        assert closed.value.code == 40302 and "ban" in closed.value.message
        await host.chat_unban("bob")
        assert (await viewer.next("on-chat-state"))["chat_banned"] is False

        message = (await guest.broadcast("rude"))["message_id"]
        report_id = await viewer.report("insult", message_id=message)
        pushed = await host.next("on-report")
        assert pushed["report_id"] == report_id and pushed["target"] == {"type": "message", "id": message}
        assert await viewer.report("again", message_id=message) == report_id  # one per user per target
        resolved = await host.report_resolve(report_id, note="handled")  # 1.3, section 32
        assert resolved["status"] == "resolved" and resolved["note"] == "handled"
        assert resolved["resolved_by"]["peer_id"] == host.peer_id
        assert (await host.next("on-report-update"))["report"] == resolved
        with pytest.raises(RpcError) as twice:
            await host.report_resolve(report_id)
        assert twice.value.code == 40904

        await host.peer_ban(peer_id=guest.peer_id, reason="spam", duration_s=600)
        assert (await guest.next("on-peer-leave-request"))["reason"] == "spam"
        assert await guest.close_code() == 4001
        with pytest.raises(RpcError) as banned:
            await roomd.join("mod", "cy", "viewer")  # a fresh token of the same user_id
        assert banned.value.code == 40301 and "spam" in banned.value.message
        await host.peer_unban("cy")
        await (await roomd.join("mod", "cy", "viewer")).close()
        for client in (host, viewer):
            await client.close()

    asyncio.run(scenario())
