#!/usr/bin/env python3
"""`make bench`'s chat-clear row (issue 34; docs/RELIABILITY.md, "What a room's size costs"): what one
`chat-clear` over MESSAGES messages and COUNTS reaction counts costs its caller, and every other room of
the node, with the Python kit.

Each run: a fresh BINARY (test mode, manual clock: no reactions tick runs, so every change is still to be
pushed when the history goes, the worst case; `chat.history_size` MESSAGES, chat rate limits out of the
way), filled as scripts/bench/chat_costs.py does (a moderator sends MESSAGES messages, viewers react until
COUNTS (message, type, user) counts exist). A viewer of another room of the node pings in a loop, one
ping at a time, from WARMUP s before the clear until AFTER s after its answer. Reported, in ms:
  - clear: the `chat-clear` answer's round trip on loopback (the `on-chat-clear` push is checked too);
  - ping during: the slowest ping that was in flight at any moment between the clear's send and its
    answer (how long the clear held every other room);
  - ping after: the slowest ping sent within AFTER s after the answer (what freeing the old history
    off the service thread costs the node's other rooms, on a shared machine);
  - ping before: the slowest ping of the WARMUP window (the machine's noise floor).

    chat_clear.py BINARY [--messages 10000] [--counts 100000] [--runs 3] [--json FILE] [--perf FILE]

--json appends one result line per run; --perf records the daemon with `perf record -g` from 1 s before
the clear until AFTER s after it (one run only).
"""
import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from chat_costs import RoomdProcess, config_file, fill  # noqa: E402


async def pinger(client, log, stop):
    """Pings one at a time until `stop` is set; appends (sent, answered) in seconds."""
    while not stop.is_set():
        sent = time.perf_counter()
        await client.call("ping", timeout=600)
        log.append((sent, time.perf_counter()))


async def run_once(binary, messages, counts, warmup, after, perf_file):
    config = config_file(messages)
    daemon = RoomdProcess(binary=binary, config=config, clock="manual").start()
    perf = None
    try:
        moderator, other, _, made = await fill(daemon, messages, counts)
        moderator.drain()
        if perf_file:
            perf = subprocess.Popen(["perf", "record", "-F", "4999", "-g", "-p", str(daemon.process.pid),
                                     "-o", perf_file], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            await asyncio.sleep(1)
        log, stop = [], asyncio.Event()
        pings = asyncio.ensure_future(pinger(other, log, stop))
        await asyncio.sleep(warmup)
        sent = time.perf_counter()
        await moderator.call("chat-clear", timeout=600)
        answered = time.perf_counter()
        await moderator.next("on-chat-clear", timeout=60)
        await asyncio.sleep(after)
        stop.set()
        await pings
        history = await moderator.call("chat-history", {"limit": 10})
        if history.get("messages"):
            raise SystemExit(f"chat-history after the clear still has {len(history['messages'])} messages")
        during = [e - s for s, e in log if e >= sent and s <= answered]
        later = [e - s for s, e in log if answered < s <= answered + after]
        before = [e - s for s, e in log if e < sent]
        return dict(scenario="chat-clear", messages=messages, counts=made, clear_ms=(answered - sent) * 1000,
                    ping_during_ms=max(during, default=0) * 1000, pings_during=len(during),
                    ping_after_ms=max(later, default=0) * 1000, pings_after=len(later),
                    ping_before_ms=max(before, default=0) * 1000)
    finally:
        if perf:
            perf.send_signal(signal.SIGINT)
            perf.wait(timeout=60)
        daemon.stop(timeout=5)
        os.unlink(config)


def spread(values):
    m = statistics.median(values)
    return f"{m:.2f}" if len(values) == 1 else f"{m:.2f} ({min(values):.2f}–{max(values):.2f})"


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--messages", type=int, default=10000)
    p.add_argument("--counts", type=int, default=100000)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=float, default=0.5)
    p.add_argument("--after", type=float, default=1.0)
    p.add_argument("--json")
    p.add_argument("--perf")
    a = p.parse_args()
    results = []
    for run in range(1, a.runs + 1):
        r = await run_once(a.binary, a.messages, a.counts, a.warmup, a.after, a.perf if run == 1 else None)
        results.append(r)
        print(f"run {run}: {r['messages']:,} messages, {r['counts']:,} counts: chat-clear {r['clear_ms']:.2f} ms;"
              f" worst ping elsewhere during it {r['ping_during_ms']:.2f} ms ({r['pings_during']} pings),"
              f" in the {a.after:g} s after {r['ping_after_ms']:.2f} ms, before {r['ping_before_ms']:.2f} ms",
              flush=True)
        if a.json:
            with open(a.json, "a") as out:
                out.write(json.dumps(r) + "\n")
    print(f"chat-clear ms {spread([r['clear_ms'] for r in results])};"
          f" worst ping elsewhere during it {spread([r['ping_during_ms'] for r in results])};"
          f" after {spread([r['ping_after_ms'] for r in results])}")


if __name__ == "__main__":
    asyncio.run(main())
