"""Section 23 with the Python kit: the token refreshes by itself, RTMP and
recording helpers, REST room creation — on test mode's manual clock."""
import asyncio
import json
import time
import urllib.request

import pytest

from roomd import RoomdProcess, RpcError


def test_the_kit_refreshes_the_token_by_itself_before_it_expires():
    start = int(time.time()) * 1000
    with RoomdProcess(clock="manual", clock_start=start) as roomd:
        now = start / 1000

        async def scenario():
            viewer = await roomd.connect()
            await viewer.join(roomd.minter.app_token("show", "bob", "viewer", ttl=400, now=now))
            asked = []

            async def provider():
                asked.append(1)
                return roomd.minter.app_token("show", "bob", "guest", ttl=7200, now=now)

            refresher = viewer.refresh_tokens(provider)
            roomd.advance(100)  # 300 s (token_refresh_s) left: the warning, answered by the kit
            policy = await viewer.next("on-policy-change")
            assert policy["name"] == "guest", "the new token's role"
            assert asked == [1]
            roomd.advance(6800 - 1)
            await asyncio.sleep(0.1)
            assert asked == [1], "the new token is not due yet"
            roomd.advance(1)
            for _ in range(100):
                if len(asked) == 2:
                    break
                await asyncio.sleep(0.02)
            assert asked == [1, 1]
            refresher.cancel()
            with pytest.raises(RpcError) as denied:
                await viewer.rtmp_start(["rtmp://a/key"], record=True)  # a guest lacks rtmpStreaming
            assert denied.value.code == 40300

        asyncio.run(scenario())


def test_rest_creates_a_room_that_waits_for_its_host():
    with RoomdProcess() as roomd:
        body = json.dumps({"room_id": "friday", "metadata": {"topic": "Pilots"},
                           "polls": [{"title": "Who wins?", "type": "poll"}]}).encode()
        request = urllib.request.Request(f"{roomd.http_url}/v2/rooms", data=body, method="POST",
                                         headers={"Authorization": "Bearer " + roomd.management_token()})
        with urllib.request.urlopen(request, timeout=5) as answer:
            session = json.loads(answer.read())["room"]["session_id"]

        async def scenario():
            host = await roomd.connect()
            joined = await host.join(roomd.token("friday", "ada", "host"))
            assert joined["room"]["session_id"] == session
            assert (await host.call("get-metadata", {"key": "topic"}))["value"] == "Pilots"
            await host.rtmp_start(["rtmp://a/key"], record=True)
            assert (await host.next("on-rtmp-update"))["rtmp_urls_count"] == 1
            assert (await host.next("on-record-update"))["running"] is True
            await host.rtmp_stop()
            await host.close()

        asyncio.run(scenario())
