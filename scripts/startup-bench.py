#!/usr/bin/env python3
"""Time from exec to roomd's listening line, N runs; prints the median (ms).

Usage: scripts/startup-bench.py [BINARY] [RUNS]
"""
import os, statistics, subprocess, sys, tempfile, time

binary = sys.argv[1] if len(sys.argv) > 1 else ".build/release/roomd"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "config", "roles.json")
with tempfile.NamedTemporaryFile("w", delete=False) as secret:
    secret.write("startup-bench-secret-of-at-least-32-bytes")

times = []
for _ in range(runs):
    start = time.perf_counter()
    proc = subprocess.Popen([binary, "--config", config, "--port", "0", "--secret-file", secret.name],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - start) * 1000
    proc.terminate()
    proc.wait(timeout=5)
    if not line.startswith("roomd listening on ws://"):
        sys.exit(f"unexpected output: {line!r}")
    times.append(elapsed)
os.unlink(secret.name)
times.sort()
print(f"startup (exec to listening line), {runs} runs: median {statistics.median(times):.1f} ms, "
      f"min {times[0]:.1f} ms, max {times[-1]:.1f} ms")
