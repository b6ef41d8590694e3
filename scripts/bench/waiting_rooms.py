"""Rooms that wait (issue 23, PROTOCOL.md section 23): what 1,000 sessions
whose last peer left cost while they wait out `settings.room.empty_timeout_s`.

    .venv-test/bin/python scripts/bench/waiting_rooms.py --rooms 1000

Two fresh daemons (the release build), the same steps: for each room a host
joins, sets one session-store entry and leaves. With `empty_timeout_s` 3600
the sessions wait; with 0 they end at once (the baseline). Memory per
waiting room is the RSS difference ÷ rooms; idle CPU is the waiting daemon's
over a 10-s window. Then the manual clock (test mode) jumps an hour and every
waiting session ends in that one advance (counted by /healthz). --json FILE
appends one result line.
"""
import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python"))

from roomd import RoomdProcess  # noqa: E402

CLOCK_TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICK


def healthz(roomd: RoomdProcess) -> dict:
    with urllib.request.urlopen(f"{roomd.http_url}/healthz", timeout=5) as answer:
        return json.loads(answer.read())


async def fill(roomd: RoomdProcess, rooms: int) -> None:
    for i in range(rooms):
        host = await roomd.join(f"show-{i}", f"host-{i}", "host")
        await host.call("set-metadata", {"key": "topic", "value": f"show {i}"})
        await host.call("leave")
        await host.close()


def config(tmp: Path, timeout_s: int) -> Path:
    template = json.loads((ROOT / "config" / "roles.json").read_text())
    template.setdefault("settings", {}).setdefault("room", {})["empty_timeout_s"] = timeout_s
    path = tmp / f"roles-{timeout_s}.json"
    path.write_text(json.dumps(template))
    return path


def measure(binary: str, tmp: Path, rooms: int, timeout_s: int, window: float) -> dict:
    with RoomdProcess(binary=binary, config=config(tmp, timeout_s), clock="manual") as roomd:
        pid = roomd.process.pid
        time.sleep(1)
        before = rss_bytes(pid)
        asyncio.run(fill(roomd, rooms))
        time.sleep(1)  # the last closes are handled
        after = rss_bytes(pid)
        waiting = healthz(roomd)["rooms"]
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(window)
        idle_pct = 100 * (cpu_seconds(pid) - cpu0) / (time.monotonic() - t0)
        started = time.monotonic()
        roomd.advance(timeout_s + 1)
        advance_s = time.monotonic() - started
        left = healthz(roomd)["rooms"]
    return {"rss_before": before, "rss_after": after, "waiting": waiting, "idle_cpu_pct": idle_pct,
            "advance_s": advance_s, "left_after_timeout": left}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, default=1000)
    parser.add_argument("--window", type=float, default=10.0, help="idle CPU window (s)")
    parser.add_argument("--json", help="append one JSON result line to this file")
    args = parser.parse_args()
    binary = os.environ.get("ROOMD_BIN") or str(ROOT / ".build" / "release" / "roomd")
    with tempfile.TemporaryDirectory() as tmp:
        waiting = measure(binary, Path(tmp), args.rooms, 3600, args.window)
        ended = measure(binary, Path(tmp), args.rooms, 0, 1.0)
    per_room = (waiting["rss_after"] - ended["rss_after"]) / args.rooms
    ok = waiting["waiting"] == args.rooms and waiting["left_after_timeout"] == 0 and ended["waiting"] == 0
    print(f"waiting rooms: {waiting['waiting']} waiting, {per_room / 1024:.1f} KiB each "
          f"(RSS {waiting['rss_after'] / 2**20:.1f} MiB against {ended['rss_after'] / 2**20:.1f} MiB when they end), "
          f"idle CPU {waiting['idle_cpu_pct']:.2f} %, all ended by one 1-h advance in {waiting['advance_s']:.3f} s"
          f" ({waiting['left_after_timeout']} left){'' if ok else ' — CHECK FAILED'}")
    if args.json:
        with open(args.json, "a") as out:
            out.write(json.dumps({"scenario": "waiting", "rooms": args.rooms, "waiting": waiting["waiting"],
                                  "bytes_per_room": round(per_room), "rss_waiting": waiting["rss_after"],
                                  "rss_ended": ended["rss_after"], "idle_cpu_pct": round(waiting["idle_cpu_pct"], 3),
                                  "end_advance_s": round(waiting["advance_s"], 4),
                                  "left_after_timeout": waiting["left_after_timeout"], "ok": ok}) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
