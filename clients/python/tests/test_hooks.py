"""The Python kit's hook server (roomd.hooks) against a real daemon (PROTOCOL.md section 30)."""
import asyncio

import pytest

from roomd import RpcError
from roomd.hooks import body, delayed, rewrite, shadow, silence, status


def test_each_answer_of_the_hook_server(roomd_factory, hook_server):
    roomd = roomd_factory(hooks=hook_server, test_mode=True,
                          settings={"hooks": {"timeout_ms": 200, "on_error": "deny"}})

    async def scenario():
        host = await roomd.join("show", "h", "host")
        hook_server.answer(rewrite(name="Fan One", attributes={"tier": "gold"}))
        fan = await roomd.join("show", "f", "viewer")
        joined = await host.next("on-peer-join")
        assert joined["peer"]["info"]["name"] == "Fan One" and joined["peer"]["attributes"] == {"tier": "gold"}
        for answer in (status(500), body(b"nope"), body(b'{"allow":true,"x":"' + b"a" * 70_000 + b'"}'),
                       silence()):
            hook_server.answer(answer)
            with pytest.raises(RpcError) as failed:
                await fan.broadcast("x")
            assert failed.value.code == 5004, answer
        roomd.fail_hooks(1, "timeout")
        assert {"hooks": {"status": "timeout", "left": 1}} in roomd.faults()
        with pytest.raises(RpcError) as failed:
            await fan.broadcast("y")
        assert failed.value.code == 5004
        hook_server.answer(delayed(0.05, shadow()))
        await fan.broadcast("z")
        heard = await host.next("on-broadcast")
        assert heard["info"]["message"] == "z" and heard["shadowed"] is True
        events = [request["type"] for request in hook_server.requests()]
        assert events.count("join") == 2 and "message" in events
        await host.close()
        await fan.close()

    asyncio.run(scenario())
