#!/usr/bin/env python3
"""Issue 34's feed probe (docs/RELIABILITY.md, "The audience feed under distinct spans"): one viewer token
asks SPANS distinct spans of a busy show in SECONDS while the show's host pings; prints the host's ping
latency before and during, the answers' statuses, roomd's CPU and RSS, as one JSON line.

A show is filled first for FILL seconds: CHATTERS peers send chat to everyone (MSG_BYTES each, RATE a
second in all) and tap the stream, each message liked by the others, so a 60-s span's body is ~400 KB; the chat goes on during the probe.

    feed_spans.py --port P --secret-file F --pid PID [--spans 400] [--seconds 16] [--fill 70]

Needs the Python kit (clients/python) and its `websockets`. Start roomd yourself, e.g.
    roomd serve --config config/roles.json --port 7990 --secret-file F
"""
import argparse
import asyncio
import http.client
import json
import os
import random
import statistics
import threading
import time

from roomd import TokenMinter, connect

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def percentile(values, p):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def ask_spans(port, token, spans, seconds, statuses, bodies):
    """The attacker: SPANS distinct spans paced over SECONDS on one kept connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    start = time.monotonic()
    for i, (frm, to) in enumerate(spans):
        due = start + i * seconds / len(spans)
        if due > time.monotonic():
            time.sleep(due - time.monotonic())
        try:
            conn.request("GET", f"/v2/rooms/show/feed?from={frm}&to={to}",
                         headers={"Authorization": f"Bearer {token}"})
            response = conn.getresponse()
            body = response.read()
            statuses[response.status] = statuses.get(response.status, 0) + 1
            if response.status == 200:
                bodies.append(len(body))
        except Exception as error:  # noqa: BLE001 - counted, the probe goes on
            statuses[type(error).__name__] = statuses.get(type(error).__name__, 0) + 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--secret-file", required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--spans", type=int, default=400)
    p.add_argument("--seconds", type=float, default=16)
    p.add_argument("--fill", type=float, default=70)
    p.add_argument("--chatters", type=int, default=4)
    p.add_argument("--rate", type=float, default=8)
    p.add_argument("--msg-bytes", type=int, default=600)
    p.add_argument("--label", default="")
    a = p.parse_args()
    with open(a.secret_file, "rb") as f:
        minter = TokenMinter(f.read().strip())
    url = f"ws://127.0.0.1:{a.port}/ws"

    async def join(user, role):
        client = await connect(url)
        await client.join(minter.app_token("show", user, role))
        return client

    host = await join("host", "host")
    chatters = [await join(f"chatter-{i}", "guest") for i in range(a.chatters)]
    stop = asyncio.Event()

    async def chat():
        n = 0
        while not stop.is_set():
            chatter = chatters[n % len(chatters)]
            text = f"{n} " + "".join(random.choice("abcdefghij \"é") for _ in range(a.msg_bytes))
            sent = await chatter.call("broadcast", {"info": {"message": text[: a.msg_bytes], "type": "chat"}})
            if n % 3 == 0:
                await chatter.call("react", {"target": "stream", "type": "fire", "count": 1})
            for other in chatters:  # every message gets reactions: totals to merge across seconds
                if other is not chatter:
                    await other.call("react", {"target": sent["message_id"], "type": "like", "count": 1})
            n += 1
            await asyncio.sleep(1 / a.rate)

    async def pings(seconds):
        rtts = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            sent = time.monotonic()
            await host.call("ping")
            rtts.append((time.monotonic() - sent) * 1000)
            await asyncio.sleep(0.02)
        return rtts

    chatting = asyncio.create_task(chat())
    fill_start = int(time.time())
    await asyncio.sleep(a.fill)
    idle = await pings(5)
    now = int(time.time())
    # distinct spans of 30..60 s inside what was filled
    spans = []
    shortest = max(1, min(30, int(a.fill) - 45))  # 30..60 s once the fill is 75 s
    for i in range(a.spans):
        length = shortest + i % 31
        frm = fill_start + 2 + i // 31
        spans.append((frm, min(frm + length, now - 1)))
    assert len(set(spans)) == len(spans), "spans must be distinct"
    token = minter.app_token("show", "viewer-1", "viewer")
    statuses, bodies = {}, []
    rss_before, cpu_before = rss_mb(a.pid), cpu_seconds(a.pid)
    attacker = threading.Thread(target=ask_spans, args=(a.port, token, spans, a.seconds, statuses, bodies))
    started = time.monotonic()
    attacker.start()
    busy = await pings(a.seconds)
    await asyncio.to_thread(attacker.join)
    elapsed = time.monotonic() - started
    cpu = (cpu_seconds(a.pid) - cpu_before) / elapsed * 100
    stop.set()
    await chatting
    print(json.dumps({
        "label": a.label,
        "spans": a.spans, "seconds": a.seconds, "elapsed_s": round(elapsed, 1),
        "statuses": statuses,
        "body_kb_median": round(statistics.median(bodies) / 1024, 1) if bodies else None,
        "ping_idle_ms": {"p50": round(percentile(idle, 50), 2), "p99": round(percentile(idle, 99), 2)},
        "ping_busy_ms": {"p50": round(percentile(busy, 50), 2), "p99": round(percentile(busy, 99), 2),
                         "max": round(max(busy), 2), "n": len(busy)},
        "cpu_percent": round(cpu, 1),
        "rss_mb": {"before": round(rss_before, 1), "after": round(rss_mb(a.pid), 1)},
    }))


asyncio.run(main())
