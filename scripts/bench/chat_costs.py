#!/usr/bin/env python3
"""What `chat-clear`, `message-delete` and a ring eviction cost as a room grows (docs/RELIABILITY.md,
"What a room's size costs"), with the Python kit.

For each history size H and reaction-count target C: a fresh BINARY (test mode, manual clock: no
reactions tick runs, so every change is still to be pushed when the history goes, the worst case;
`chat.history_size` H, rate limits out of the way). A moderator fills the ring with H messages, then
viewers react until C (message, type, user) counts exist (6 types; as many users as it takes). Timed,
as the answer's round trip on loopback:
  - eviction: 5 broadcasts into the full ring, each pushing the oldest message (and its reactions) out;
  - message-delete: 5 deletes of messages in the middle of the history;
  - chat-clear: once, while a peer of another room pings in a loop (its slowest ping is reported).

    chat_costs.py BINARY [--histories 200,2000,10000] [--counts 1000,100000] [--clear-timeout 60]

Needs the kit (`pip install -e clients/python`, or PYTHONPATH=clients/python) and `websockets`.
"""
import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
from roomd import RoomdProcess  # noqa: E402

TYPES = ["like", "love", "laugh", "wow", "fire", "clap"]
REPO = os.path.join(os.path.dirname(__file__), "..", "..")


async def batch(client, calls):
    """One JSON-RPC batch; returns its answers (pushes before it are dropped)."""
    entries = [dict(jsonrpc="2.0", id=i + 1, method=m, params=p) for i, (m, p) in enumerate(calls)]
    await client.send_text(json.dumps(entries))
    while True:
        message = await client.next_message(timeout=600)
        if isinstance(message, list):
            return message


async def batches(client, calls, size=64):
    answers = []
    for start in range(0, len(calls), size):
        answers += await batch(client, calls[start:start + size])
    return answers


async def timed(coroutine):
    start = time.perf_counter()
    result = await coroutine
    return (time.perf_counter() - start) * 1000, result


def config_file(history):
    """A copy of config/roles.json with `chat.history_size` HISTORY and the chat rate limits out of the way."""
    with open(os.path.join(REPO, "config", "roles.json"), encoding="utf-8") as f:
        template = json.load(f)
    settings = template.setdefault("settings", {})
    settings.setdefault("chat", {})["history_size"] = history
    settings.setdefault("limits", {}).update(messages_per_second=1_000_000, message_burst=1_000_000)
    config = tempfile.NamedTemporaryFile("w", suffix=".json", delete=False)
    json.dump(template, config)
    config.close()
    return config.name


async def fill(daemon, history, counts):
    """A moderator in room-1 fills the ring with HISTORY messages, then viewers react until COUNTS
    (message, type, user) counts exist; a viewer of room-2 waits. Returns (moderator, other, ids, made)."""
    moderator = await daemon.join("room-1", "mod", "moderator")
    other = await daemon.join("room-2", "elsewhere", "viewer")
    answers = await batches(moderator, [("broadcast", {"info": {"message": f"m{n}"}}) for n in range(history)])
    ids = [a["result"]["message_id"] for a in answers]
    per_user = history * len(TYPES)
    users = (counts + per_user - 1) // per_user
    made = 0
    for u in range(users):
        viewer = await daemon.join("room-1", f"u{u}", "viewer")
        calls = []
        for n in range(u * per_user, min(counts, (u + 1) * per_user)):
            rest = n % per_user
            calls.append(("react", {"target": ids[rest % history], "type": TYPES[rest // history]}))
        answers = await batches(viewer, calls)
        made += sum(1 for a in answers if "result" in a)
        await viewer.close()
    return moderator, other, ids, made


async def measure(binary, history, counts, clear_timeout):
    config = config_file(history)
    daemon = RoomdProcess(binary=binary, config=config, clock="manual").start()
    try:
        moderator, other, ids, made = await fill(daemon, history, counts)
        evictions = []
        for n in range(5):
            ms, _ = await timed(moderator.call("broadcast", {"info": {"message": f"new{n}"}}))
            evictions.append(ms)
        deletes = []
        for n in range(5):
            ms, _ = await timed(moderator.call("message-delete", {"message_id": ids[history // 2 + n]}))
            deletes.append(ms)
        clear = asyncio.ensure_future(timed(moderator.call("chat-clear", timeout=clear_timeout)))
        worst = 0.0
        while not clear.done():
            try:
                ms, _ = await timed(other.call("ping", timeout=clear_timeout + 5))
            except Exception:  # noqa: BLE001 - the kit's timeout: the node never answered
                worst = float("inf")
                break
            worst = max(worst, ms)
        try:
            clear_ms, _ = await clear
            clear_text = f"{clear_ms:.1f}"
        except Exception:  # noqa: BLE001 - the kit's timeout
            clear_text = f"> {clear_timeout * 1000:.0f} (no answer)"
        return dict(history=history, counts=made, eviction=statistics.median(evictions), eviction_max=max(evictions),
                    delete=statistics.median(deletes), delete_max=max(deletes), clear=clear_text, ping=worst)
    finally:
        daemon.stop(timeout=2)
        os.unlink(config)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--histories", default="200,2000,10000")
    p.add_argument("--counts", default="1000,100000")
    p.add_argument("--clear-timeout", type=float, default=60)
    a = p.parse_args()
    print("| history | reaction counts | eviction ms (median, max of 5) | message-delete ms (median, max of 5)"
          " | chat-clear ms | worst ping in another room during the clear, ms |")
    print("|---:|---:|---:|---:|---:|---:|")
    for history in [int(h) for h in a.histories.split(",")]:
        for counts in [int(c) for c in a.counts.split(",")]:
            r = await measure(a.binary, history, counts, a.clear_timeout)
            print(f"| {r['history']:,} | {r['counts']:,} | {r['eviction']:.2f}, {r['eviction_max']:.2f}"
                  f" | {r['delete']:.2f}, {r['delete_max']:.2f} | {r['clear']} | {r['ping']:.1f} |", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
