"""The Python client against the real daemon (the `roomd` fixture of roomd.pytest_plugin)."""
import asyncio
import base64
import json

import pytest

from roomd import ConnectionClosed, RoomClient, RpcError, TokenMinter, WaitTimeout


def test_join_and_a_push(roomd):
    async def scenario():
        host = await roomd.connect()
        joined = await host.join(roomd.token("show", "host-1", "host", name="Ada"))
        assert joined["peer"]["role"] == "host"
        assert joined["peer"]["info"]["name"] == "Ada"
        assert joined["room"]["room_id"] == "show"
        assert joined["peers"] == [] and joined["resumed"] is False
        assert host.peer_id == joined["peer"]["peer_id"]

        viewer = await roomd.join("show", "v-1", "viewer", name="Bob")
        pushed = await host.next("on-peer-join")
        assert pushed["peer"]["peer_id"] == viewer.peer_id
        assert pushed["peer"]["info"]["name"] == "Bob"

        receipt = await viewer.broadcast("hello")
        message = await host.next("on-broadcast")
        assert message["message_id"] == receipt["message_id"]
        assert message["info"] == {"message": "hello", "type": "chat"}
        assert message["sender"]["peer_id"] == viewer.peer_id
        assert await viewer.expect_silence(0.2) == []  # the sender gets nothing back

        await viewer.leave()
        assert await viewer.close_code() == 1000
        left = await host.next("on-peer-leave")
        assert left == {"peer_id": viewer.peer_id, "reason": "client request"}
        await host.close()

    asyncio.run(scenario())


def test_next_leaves_other_pushes_queued_in_order(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer")
        await viewer.broadcast("one")
        await viewer.broadcast("two")
        await viewer.raise_hand()
        # Skip ahead to the hand raise; the join and both messages stay queued, in order.
        # The predicate gets the params; pushes it does not fit (on-broadcast has no "peer") do not match.
        update = await host.next(where=lambda params: params["peer"]["groups"])
        assert update["peer"]["groups"] == ["_handraise"]
        assert [m["method"] for m in host.drain()] == ["on-peer-join", "on-broadcast", "on-broadcast"]
        await host.close()
        await viewer.close()

    asyncio.run(scenario())


def test_chat_history_helpers(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        guest = await roomd.join("show", "g-1", "guest")
        ids = [(await guest.broadcast(f"m{n}"))["message_id"] for n in range(3)]
        late = await roomd.connect()
        joined = await late.join(roomd.token("show", "v-1", "viewer"))
        assert [m["info"]["message"] for m in joined["chat"]["messages"]] == ["m0", "m1", "m2"]
        page = await late.chat_history(before=ids[2], limit=1)
        assert [m["message_id"] for m in page["messages"]] == [ids[1]] and page["more"] is True
        await host.message_pin(ids[0])
        assert (await late.next("on-message-pin"))["message"]["message_id"] == ids[0]
        await guest.message_delete(ids[0])
        assert (await late.next("on-message-delete"))["message_id"] == ids[0]
        assert (await late.next("on-message-pin"))["message"] is None
        with pytest.raises(RpcError) as denied:
            await guest.chat_clear()
        assert denied.value.code == 40300
        await host.message_pin(None)
        await host.chat_clear()
        assert (await late.next("on-chat-clear"))["cleared_by"]["peer_id"] == host.peer_id
        assert (await late.chat_history())["messages"] == []
        for client in (host, guest, late):
            await client.close()

    asyncio.run(scenario())


def test_question_helpers(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        guest = await roomd.join("show", "g-1", "guest")
        asked = await guest.question_add("when?")
        voted = await host.question_vote(asked["question_id"], "up")
        assert voted["up"] == 1 and voted["score"] == 1
        page = await guest.question_list(order="new", limit=5)
        assert page["total"] == 1 and page["questions"][0]["text"] == "when?"
        answered = await host.question_update(asked["question_id"], state="answered", pinned=True)
        assert answered["state"] == "answered" and answered["pinned"] is True
        pushed = await guest.next("on-questions", where=lambda p: p["changed"][0]["state"] == "answered")
        assert pushed["changed"][0]["question_id"] == asked["question_id"]
        await guest.question_delete(asked["question_id"])
        assert (await host.question_list(state="answered"))["total"] == 0
        for client in (host, guest):
            await client.close()

    asyncio.run(scenario())


def test_reaction_helpers(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer", restrictions="view_and_polls_only")
        message = (await host.broadcast("vote!"))["message_id"]
        assert await viewer.react(message, "like") == {"target": message, "type": "like", "total": 1}
        assert (await viewer.react("contestant:red", "fire", count=7))["total"] == 7
        pushed = await host.next("on-reactions")
        assert {(p["target"], p["type"]) for p in pushed["counts"]} <= {(message, "like"), ("contestant:red", "fire")}
        assert await viewer.reactions_get([message, "contestant:red"]) == [
            {"target": message, "type": "like", "total": 1, "mine": 1},
            {"target": "contestant:red", "type": "fire", "total": 7, "mine": 7}]
        assert (await viewer.unreact(message, "like"))["total"] == 0
        with pytest.raises(RpcError) as tap:
            await viewer.unreact("stream", "fire")
        assert tap.value.code == -32602
        for client in (host, viewer):
            await client.close()

    asyncio.run(scenario())


def test_guest_call_in_polite_role_change(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer")
        with pytest.raises(RpcError) as denied:
            await viewer.track_add("audio")
        assert denied.value.code == 40300

        await viewer.raise_hand()
        token = await host.role_change_request(viewer.peer_id, "guest")   # polite: a token
        assert isinstance(token, str) and token
        offer = await viewer.next("on-role-change-request")
        assert offer["role"] == "guest" and offer["token"] == token
        assert offer["requested_by"]["peer_id"] == host.peer_id

        me = await viewer.role_change(offer["token"])
        assert me["role"] == "guest"
        policy = await viewer.next("on-policy-change")
        assert policy["name"] == "guest"
        changed = await host.next("on-peer-update", where=lambda p: p["changed"] == ["role"])
        assert changed["peer"]["role"] == "guest"

        track = await viewer.track_add("audio", track_id="mic")          # a guest may publish
        assert track["track_id"] == "mic" and track["mute"] is False
        added = await host.next("on-track-add")
        assert added["peer_id"] == viewer.peer_id and added["track"]["track_id"] == "mic"

        assert await host.role_change_request(viewer.peer_id, "viewer", force=True) is None  # back to the audience
        removed = await host.next("on-track-remove")
        assert removed["track"]["track_id"] == "mic"
        with pytest.raises(RpcError) as used:
            await viewer.role_change(token)                                # single-use
        assert used.value.code == 40403
        await host.close()
        await viewer.close()

    asyncio.run(scenario())


def test_errors_carry_the_protocol_code(roomd):
    async def scenario():
        client = await roomd.connect()
        with pytest.raises(RpcError) as not_joined:
            await client.broadcast("hi")
        assert not_joined.value.code == 40005
        with pytest.raises(RpcError) as no_method:
            await client.call("no-such-method", {})
        assert no_method.value.code == -32601
        wrong = TokenMinter("another-secret-of-at-least-32-bytes!!!").app_token("show", "u", "host")
        with pytest.raises(RpcError) as bad_signature:
            await client.join(wrong)
        assert bad_signature.value.code == 40109
        with pytest.raises(RpcError) as unknown_role:
            await client.join(roomd.token("show", "u", "director"))
        assert unknown_role.value.code == 40108
        joined = await client.join(roomd.token("show", "u", "viewer"))
        with pytest.raises(RpcError) as bad_params:
            await client.call("broadcast", {"info": {"message": "x"}, "roles": []})
        assert bad_params.value.code == -32602
        with pytest.raises(RpcError) as no_permission:
            await client.role_change_request(joined["peer"]["peer_id"], "guest")
        assert no_permission.value.code == 40300
        await client.close()

    asyncio.run(scenario())


def test_restricted_token_may_view_but_not_speak(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        fan = await roomd.join("show", "fan-1", "host", restrictions="view_and_polls_only")
        for call in (fan.broadcast("hi"), fan.track_add("audio"), fan.raise_hand(),
                     fan.role_change_request(host.peer_id, "viewer", force=True)):
            with pytest.raises(RpcError) as refused:
                await call
            assert refused.value.code == 40300
        found = await fan.find_peer()
        assert found["total"] == 2                                      # it may still read
        await host.broadcast("welcome")
        assert (await fan.next("on-broadcast"))["info"]["message"] == "welcome"
        joined = await host.next("on-peer-join")
        assert joined["peer"]["peer_id"] == fan.peer_id
        assert await host.expect_silence(0.2) == []                      # nothing the fan tried reached anyone
        await host.close()
        await fan.close()

    asyncio.run(scenario())


def test_removed_peer_sees_close_code_4001(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer")
        await host.peer_leave_request(viewer.peer_id, reason="bye")
        request = await viewer.next("on-peer-leave-request")
        assert request["room_end"] is False and request["reason"] == "bye"
        assert await viewer.close_code() == 4001
        with pytest.raises(ConnectionClosed) as closed:
            await viewer.ping()
        assert closed.value.code == 4001
        await host.close()

    asyncio.run(scenario())


def test_token_claims_match_the_swift_minter():
    minter = TokenMinter("a-test-secret-of-at-least-32-bytes!!")
    token = minter.app_token("show", "u-1", "guest", name="Ada", restrictions="view_and_polls_only",
                             access_key="k", ttl=60, now=1_763_700_000.9)
    header, payload, _ = token.split(".")
    pad = lambda s: s + "=" * (-len(s) % 4)  # noqa: E731
    assert json.loads(base64.urlsafe_b64decode(pad(header))) == {"alg": "HS256", "typ": "JWT"}
    claims = json.loads(base64.urlsafe_b64decode(pad(payload)))
    jti = claims.pop("jti")
    assert len(jti) == 36 and jti == jti.upper()
    assert claims == {"type": "app", "version": 2, "room_id": "show", "user_id": "u-1", "role": "guest",
                      "name": "Ada", "user_restrictions": "view_and_polls_only", "access_key": "k",
                      "iat": 1_763_700_000, "nbf": 1_763_699_999, "exp": 1_763_700_060}
    management = json.loads(base64.urlsafe_b64decode(pad(minter.management_token().split(".")[1])))
    assert management["type"] == "management" and "room_id" not in management


def test_management_token_works_with_the_rest_api(roomd):
    import urllib.request

    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        request = urllib.request.Request(f"{roomd.http_url}/v2/active-rooms/show",
                                         headers={"Authorization": "Bearer " + roomd.management_token()})
        body = await asyncio.get_running_loop().run_in_executor(
            None, lambda: json.load(urllib.request.urlopen(request, timeout=5)))
        await host.close()
        return body

    body = asyncio.run(scenario())
    assert "host-1" in json.dumps(body)


def test_roomd_fixture_stops_the_daemon_with_sigterm(roomd_factory):
    daemon = roomd_factory()
    assert daemon.url.startswith("ws://127.0.0.1:") and daemon.url.endswith("/ws") and daemon.port > 0
    assert daemon.stop() == 0                     # SIGTERM: a clean exit
    assert daemon.process.returncode == 0


def test_daemon_exits_when_the_harness_dies(tmp_path):
    """A harness killed with SIGKILL (no teardown, no atexit) does not leave roomd running."""
    import os
    import subprocess
    import sys
    import time

    script = tmp_path / "harness.py"
    script.write_text("import os, signal, sys\nfrom roomd import RoomdProcess\n"
                      "daemon = RoomdProcess().start()\nprint(daemon.process.pid, flush=True)\n"
                      "os.kill(os.getpid(), signal.SIGKILL)\n")
    harness = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30)
    pid = int(harness.stdout.split()[0])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return  # gone
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(")")[1].split()[0] == "Z":  # exited, a zombie of init waiting to be reaped
                return
        time.sleep(0.05)
    os.kill(pid, 9)
    raise AssertionError("roomd kept running after its harness was killed")


def test_roomd_factory_takes_another_template(roomd_factory, tmp_path):
    from roomd import find_config

    template = json.load(open(find_config()))
    template["roles"]["viewer"]["maxPeerCount"] = -1          # nobody may join as a viewer
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(template))
    daemon = roomd_factory(config=path, args=["--log-level", "debug"])

    async def scenario():
        client = await daemon.connect()
        with pytest.raises(RpcError) as refused:
            await client.join(daemon.token("show", "v-1", "viewer"))
        assert refused.value.code == 40108
        await client.close()

    asyncio.run(scenario())


def test_a_timed_out_wait_says_what_it_waited_for_and_what_is_queued(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        guest = await roomd.join("show", "guest-1", "guest")
        await guest.broadcast("hello")
        await host.next("on-broadcast")  # the join push is queued before it
        with pytest.raises(WaitTimeout) as waited:
            await host.next("on-role-change-request", timeout=0.3)
        assert waited.value.waited_for == "on-role-change-request" and waited.value.timeout == 0.3
        assert waited.value.queued_count == 1 and waited.value.queued[0].startswith("on-peer-join {")
        assert guest.peer_id in waited.value.queued[0]
        assert str(waited.value).startswith(
            "timed out after 0.3 s waiting for on-role-change-request; 1 entry queued: on-peer-join {")
        assert isinstance(waited.value, asyncio.TimeoutError), "old `except asyncio.TimeoutError` still catches it"

        def goodbye(params):
            return params["info"]["message"] == "goodbye"
        await guest.broadcast("hello again")
        with pytest.raises(WaitTimeout, match=r"waiting for on-broadcast where goodbye; 2 entries queued: "
                                              r"on-peer-join \{.*, on-broadcast \{\"message_id\""):
            await host.next("on-broadcast", where=goodbye, timeout=0.2)
        with pytest.raises(WaitTimeout, match="waiting for the host's goodbye;"):
            await host.next("on-broadcast", where=goodbye, timeout=0.1, description="the host's goodbye")
        # Nothing was consumed; the params predicate matches the push it describes.
        again = await host.next("on-broadcast", where=lambda p: p["info"]["message"] == "hello again")
        assert again["sender"]["peer_id"] == guest.peer_id
        assert [m["method"] for m in host.drain()] == ["on-peer-join"]
        await host.close()
        await guest.close()

    asyncio.run(scenario())


def test_the_whole_push_predicate_still_works_with_a_deprecation_warning(roomd):
    async def scenario():
        host = await roomd.join("show", "host-1", "host")
        viewer = await roomd.join("show", "v-1", "viewer")
        with pytest.warns(DeprecationWarning, match="next\\(method, where=predicate\\)"):
            push = await host.next(lambda push: push["method"] == "on-peer-join")
        assert push["params"]["peer"]["peer_id"] == viewer.peer_id
        await host.close()
        await viewer.close()

    asyncio.run(scenario())
