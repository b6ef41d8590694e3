"""RSS per compressing connection (issue 37, docs/BENCHMARKS.md (b′)): `make bench` runs it.

    deflate_rss.py URL SECRET_FILE ROOMD_PID N deflate|none [--json FILE]

N Python `websockets` clients (the test venv's; with `deflate` they negotiate permessage-deflate
and compress every message they send, as browsers do), each joining a room of its own as a
viewer and sending 3 pings with a 200-byte note; then roomd's RSS growth per connection. Run it
against `roomd` and against `roomd --no-permessage-deflate` with `none`: the difference is
what compression costs per connection.
"""
import asyncio
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python"))
from roomd.token import TokenMinter
import websockets

args = sys.argv[1:]
json_out = None
if "--json" in args:
    at = args.index("--json")
    json_out = args[at + 1]
    del args[at:at + 2]
url, secret_file, pid, n, mode = args[0], args[1], int(args[2]), int(args[3]), args[4]
secret = open(secret_file).read().strip()
minter = TokenMinter(secret)

def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024

async def one(i, sockets):
    ws = await websockets.connect(url, compression=("deflate" if mode == "deflate" else None), max_size=None)
    sockets.append(ws)
    tok = minter.app_token(room=f"rss-{i}", user=f"u{i}", role="viewer")
    await ws.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "join", "params": {"token": tok, "name": f"viewer number {i}"}}))
    while True:
        m = json.loads(await ws.recv())
        if m.get("id") == 1:
            assert "result" in m, m
            break
    for k in range(2, 5):
        await ws.send(json.dumps({"jsonrpc": "2.0", "id": k, "method": "ping", "params": {"note": "x" * 200}}))
        while True:
            m = json.loads(await ws.recv())
            if m.get("id") == k:
                break

async def main():
    sockets = []
    await asyncio.sleep(0.5)
    before = rss()
    for start in range(0, n, 200):
        await asyncio.gather(*(one(i, sockets) for i in range(start, min(n, start + 200))))
    await asyncio.sleep(2)
    after = rss()
    print(f"{mode}: {n} connections, roomd RSS {before/2**20:.1f} -> {after/2**20:.1f} MiB, {(after-before)/n:.0f} B per connection")
    if json_out:
        with open(json_out, "a") as f:
            f.write(json.dumps({"scenario": "deflate-rss", "mode": mode, "connections": n, "rss_before": before,
                                "rss_after": after, "bytes_per_connection": (after - before) / n}) + "\n")
    for ws in sockets:
        await ws.close()

asyncio.run(main())
