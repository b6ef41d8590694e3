#!/usr/bin/env python3
"""Room activity for the feed section (scripts/bench/sections.sh), with the Python kit: a host in ROOM
chats once a second and taps the stream; a visible poll runs and VOTERS viewers vote on it, spread over
the duration (its stats change every second); the stream is live with a cue. With --prepare it sends
one burst of the same and returns, printing a span [from, to) that holds it (its body is what the
ladder's requests and nginx's static file serve).

    feed_room.py --url ws://127.0.0.1:PORT/ws --secret-file F --room R (--duration S | --prepare)
"""
import argparse
import asyncio
import random
import time

from roomd import TokenMinter, connect


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--secret-file", required=True)
    p.add_argument("--room", default="fanout")
    p.add_argument("--duration", type=float, default=30)
    p.add_argument("--voters", type=int, default=60)
    p.add_argument("--prepare", action="store_true")
    a = p.parse_args()
    with open(a.secret_file, "rb") as f:
        minter = TokenMinter(f.read().strip())

    async def join(user, role):
        client = await connect(a.url)
        await client.join(minter.app_token(a.room, user, role))
        return client

    host = await join("feed-host", "host")
    await host.call("hls-start")
    await host.call("hls-timed-metadata", {"metadata_objs": [{"payload": "scoreboard", "duration": 3600}]})
    poll = await host.call("poll-info-set", {"title": "Who wins?", "type": "poll", "visibility": True})
    await host.call("poll-questions-set", {"poll_id": poll["poll_id"], "questions": [
        {"question": {"text": "Who wins?", "type": "single-choice"},
         "options": [{"text": "red"}, {"text": "blue"}, {"text": "green"}]}]})
    await host.call("poll-start", {"poll_id": poll["poll_id"]})
    voters = [await join(f"feed-voter-{i}", "viewer") for i in range(a.voters)]
    if a.prepare:
        start = int(time.time())
        for i in range(10):
            await host.call("broadcast", {"info": {"message": f"welcome {i}, the show starts in a minute"}})
        await host.call("react", {"target": "stream", "type": "fire", "count": 20})
        for voter in voters:
            await voter.call("poll-response", {"poll_id": poll["poll_id"],
                                               "responses": [{"question": 1, "option": random.randint(1, 3)}]})
        while time.time() < start + 2:
            await asyncio.sleep(0.1)
        end = int(time.time())
        print(f"{start} {end}")  # a span that holds the burst (the feed's window keeps it 300 s)
        return
    deadline = time.monotonic() + a.duration
    next_voter = 0
    tick = 0
    while time.monotonic() < deadline:
        tick += 1
        await host.call("broadcast", {"info": {"message": f"moment {tick}"}})
        await host.call("react", {"target": "stream", "type": random.choice(["fire", "clap", "love"]), "count": 5})
        for _ in range(max(1, a.voters // max(1, int(a.duration)))):
            if next_voter < len(voters):
                await voters[next_voter].call("poll-response", {
                    "poll_id": poll["poll_id"], "responses": [{"question": 1, "option": random.randint(1, 3)}]})
                next_voter += 1
        await asyncio.sleep(1)
    for client in voters + [host]:
        await client.close()


asyncio.run(main())
