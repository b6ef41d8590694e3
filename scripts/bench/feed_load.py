#!/usr/bin/env python3
"""One wrk run of the feed section (scripts/bench/sections.sh): wrk with scripts/bench/feed.lua against
roomd's audience feed or nginx's static copy of it; the server's CPU over the run from /proc; one JSON
line (the fields report.py reads) to --json.

    feed_load.py --url http://127.0.0.1:PORT --server-pid PID --connections C --duration S
                 [--threads T] [--delay-ms MS] [--room R | --path P] [--token-file F] --label L --json FILE
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

LUA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "feed.lua")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """The CPU of the process and of its children now (nginx: the master and its worker)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    total = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            children = [int(c) for c in f.read().split()]
    except FileNotFoundError:
        children = []
    return total + sum(cpu_seconds(child) for child in children)


def ms(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s|m)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--server-pid", type=int, required=True)
    p.add_argument("--connections", type=int, required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--duration", type=int, required=True)
    p.add_argument("--delay-ms", type=int, default=0)
    p.add_argument("--room")
    p.add_argument("--path")
    p.add_argument("--token-file")
    p.add_argument("--close", action="store_true", help="Connection: close on every request (a new TCP connection per request)")
    p.add_argument("--label", required=True)
    p.add_argument("--peers", type=int, default=0, help="peers in the room (reported)")
    p.add_argument("--json", required=True)
    a = p.parse_args()
    threads = max(1, min(a.threads, a.connections))
    env = dict(os.environ, FEED_DELAY_MS=str(a.delay_ms), FEED_THREAD_CONNS=str(-(-a.connections // threads)))
    if a.path:
        env["FEED_PATH"] = a.path
    if a.room:
        env["FEED_ROOM"] = a.room
    command = ["wrk", "-t", str(threads), "-c", str(a.connections), "-d", f"{a.duration}s", "--latency",
               "--timeout", "5s", "-s", LUA]
    if a.token_file:
        with open(a.token_file) as f:
            command += ["-H", f"Authorization: Bearer {f.read().strip()}"]
    if a.close:
        command += ["-H", "Connection: close"]
    command.append(a.url)
    cpu0, t0 = cpu_seconds(a.server_pid), time.monotonic()
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=a.duration + 60)
    cpu1, t1 = cpu_seconds(a.server_pid), time.monotonic()
    text = out.stdout + out.stderr
    sys.stdout.write(text)
    record = {"scenario": "feed-wrk", "label": a.label, "connections": a.connections, "delay_ms": a.delay_ms,
              "duration_s": a.duration, "peers": a.peers}
    percentiles = dict(re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+(?:us|ms|s|m))\s*$", text, re.M))
    if "50" in percentiles:
        record["p50_ms"] = round(ms(percentiles["50"]), 3)
    if "99" in percentiles:
        record["p99_ms"] = round(ms(percentiles["99"]), 3)
    if m := re.search(r"(\d+) requests in ([\d.]+)(m?s)", text):
        record["requests"] = int(m.group(1))
    if m := re.search(r"Requests/sec:\s+([\d.]+)", text):
        record["rps"] = float(m.group(1))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    record["non2xx"] = int(m.group(1)) if m else 0
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    record["socket_errors"] = sum(int(x) for x in m.groups()) if m else 0
    record["server_cpu_pct"] = round((cpu1 - cpu0) / (t1 - t0) * 100, 1)
    if record.get("requests"):
        record["cpu_us_per_request"] = round((cpu1 - cpu0) / record["requests"] * 1e6, 2)
    if out.returncode != 0 or "rps" not in record:
        record["aborted"] = f"wrk exited with {out.returncode}: {text.strip()[-200:]}"
    with open(a.json, "a") as f:
        f.write(json.dumps(record) + "\n")
    return 0 if "aborted" not in record else 1


if __name__ == "__main__":
    sys.exit(main())
