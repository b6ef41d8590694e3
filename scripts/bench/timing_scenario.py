"""The timing rules of a guest call-in — an invitation that expires after 60 s
(request_ttl_s), a guest gone after its 20-s reconnect grace, a 30-s quiz —
on test mode's manual clock or in real time: the wall time of each.

    .venv-test/bin/python scripts/bench/timing_scenario.py --clock manual   # well under a second
    .venv-test/bin/python scripts/bench/timing_scenario.py --clock real     # about 110 s

The shipped template's times, the same steps and checks both ways; only the
waiting differs (roomd.advance(s) against asyncio.sleep(s)). `make bench`
runs it (section (l)); --json FILE appends one result line.
"""
import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))

from roomd import RoomdProcess  # noqa: E402


async def scenario(roomd: RoomdProcess, manual: bool) -> None:
    async def wait(seconds: float) -> None:
        if manual:
            roomd.advance(seconds)
        else:
            await asyncio.sleep(seconds)

    slack = 0.5 if manual else 5.0  # real timers fire on their own at the deadline
    host = await roomd.join("show", "host-1", "host")
    ann = await roomd.join("show", "ann", "viewer")
    guest = await roomd.join("show", "guest-1", "guest")
    await host.next("on-peer-join")
    await host.next("on-peer-join")

    # 1. An invitation nobody answers expires after 60 s.
    await host.call("role-change-request", {"requested_for": ann.peer_id, "role": "guest"})
    await ann.next("on-role-change-request")
    await wait(60)
    rejected = await host.next("on-role-change-rejected", timeout=slack)
    assert rejected["reason"] == "expired", rejected

    # 2. The guest's network drops: after its 20-s grace it is gone.
    await guest.abort()
    await wait(20)
    left = await host.next("on-peer-leave", timeout=slack)
    assert left["peer_id"] == guest.peer_id and left["reason"] == "websocket closed", left

    # 3. A 30-s quiz stops on its own; the viewer's answer counted.
    poll = await host.call("poll-info-set", {"title": "Quick", "type": "quiz", "duration": 30})
    await host.call("poll-questions-set", {"poll_id": poll["poll_id"], "questions": [
        {"question": {"text": "2 + 2?", "type": "single-choice"},
         "options": [{"text": "4"}, {"text": "5"}], "answer": {"option": 1}}]})
    await host.call("poll-start", {"poll_id": poll["poll_id"]})
    await ann.next("on-poll-start")
    await ann.call("poll-response", {"poll_id": poll["poll_id"], "responses": [{"question": 1, "option": 1}]})
    await wait(30)
    stopped = await ann.next("on-poll-stop", timeout=slack)
    assert stopped["polls"][0]["poll_id"] == poll["poll_id"], stopped
    for client in (host, ann):
        await client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clock", choices=["manual", "real"], default="manual")
    parser.add_argument("--json", help="append one JSON result line to this file")
    args = parser.parse_args()
    manual = args.clock == "manual"
    binary = os.environ.get("ROOMD_BIN") or str(ROOT / ".build" / "release" / "roomd")
    with RoomdProcess(binary=binary, clock="manual" if manual else None, seed=1 if manual else None) as roomd:
        started = time.monotonic()
        asyncio.run(scenario(roomd, manual))
        seconds = time.monotonic() - started
    print(f"timing scenario, {args.clock} clock: 60-s expiry, 20-s grace, 30-s quiz in {seconds:.3f} s of wall time")
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"scenario": "timing", "clock": args.clock, "wall_s": round(seconds, 4),
                                  "simulated_s": 110}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
