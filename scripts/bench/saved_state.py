#!/usr/bin/env python3
"""The cost of a room's saved state over a cluster (docs/CLUSTER.md, "Saved state in chunks";
docs/RELIABILITY.md): bytes written to the bus per second while a room with a full history chats at
10 and at 1,000 msg/s, and the takeover time of a room with HISTORY messages of 4 KiB against an
empty one. Starts nats-server and two roomd nodes (ROOMD, a release build) on free ports.

    saved_state.py --roomd .build/release/roomd [--history 10000] [--step 10]

Needs the Python kit (PYTHONPATH=clients/python) and websockets.
"""
import argparse
import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

from roomd import TokenMinter, connect


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port, name):
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.split()[-1])
    return 0.0


def wait_healthy(port, nodes, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            body = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2).read())
            if body.get("cluster", {}).get("nodes") == nodes:
                return
        except Exception:
            pass
        time.sleep(0.1)
    raise SystemExit(f"node on {port} not healthy with {nodes} nodes")


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--roomd", required=True)
    p.add_argument("--history", type=int, default=10000)
    p.add_argument("--step", type=float, default=10)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="saved-state-")
    secret = os.path.join(work, "secret")
    with open(secret, "w") as f:
        f.write("saved-state-bench-secret-0123456789abcdef")
    config = os.path.join(work, "roles.json")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "..", "config", "roles.json")) as f:
        template = json.load(f)
    template["settings"]["chat"] = {"history_size": a.history}
    template["settings"].setdefault("limits", {}).update({"messages_per_second": 1000000, "message_burst": 1000000})
    with open(config, "w") as f:
        json.dump(template, f)
    nats_port = free_port()
    nats = subprocess.Popen(["nats-server", "-js", "-a", "127.0.0.1", "-p", str(nats_port), "-sd", work],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    nodes = []
    try:
        time.sleep(0.5)
        for n in (1, 2):
            port = free_port()
            proc = subprocess.Popen([a.roomd, "--config", config, "--port", str(port), "--secret-file", secret,
                                     "--cluster", f"nats://127.0.0.1:{nats_port}", "--node-id", f"n{n}"],
                                    stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, f"n{n}.log"), "w"))
            nodes.append((proc, port))
        for _, port in nodes:
            wait_healthy(port, 2)
        with open(secret, "rb") as f:
            minter = TokenMinter(f.read().strip())

        async def join(room, user, role, port):
            client = await connect(f"ws://127.0.0.1:{port}/ws")
            await client.join(minter.app_token(room, user, role))
            return client

        results = {}
        text = "x" * 4000
        # An empty room and a full one, both homed on n1, watched from n2.
        small_host = await join("small", "h", "host", nodes[0][1])
        small_viewer = await join("small", "v", "viewer", nodes[1][1])
        host = await join("big", "h", "host", nodes[0][1])
        viewer = await join("big", "v", "viewer", nodes[1][1])
        started = time.monotonic()
        sent = 0
        while sent < a.history:
            batch = min(200, a.history - sent)
            await asyncio.gather(*[host.call("broadcast", {"info": {"message": f"{sent + i} {text}"}})
                                   for i in range(batch)])
            sent += batch
        results["fill_s"] = round(time.monotonic() - started, 1)
        await asyncio.sleep(3)

        async def rate_step(rate):
            before = metric(nodes[0][1], "roomd_cluster_state_bytes_total")
            t0 = time.monotonic()
            n = 0
            while time.monotonic() - t0 < a.step:
                due = int((time.monotonic() - t0) * rate) + 1 - n
                if due > 0:
                    await asyncio.gather(*[host.call("broadcast", {"info": {"message": f"r{n + i} {text}"}})
                                           for i in range(due)])
                    n += due
                await asyncio.sleep(0.005)
            await asyncio.sleep(1.5)  # the last save
            after = metric(nodes[0][1], "roomd_cluster_state_bytes_total")
            return round((after - before) / a.step), n

        results["bytes_per_s_at_10"], results["sent_at_10"] = await rate_step(10)
        results["bytes_per_s_at_1000"], results["sent_at_1000"] = await rate_step(1000)
        page = await viewer.call("chat-history", {"limit": 1})
        results["history_kept_before_kill"] = a.history
        await asyncio.sleep(1.5)
        for c in (small_viewer, viewer):
            c.drain() if hasattr(c, "drain") else None
        nodes[0][0].send_signal(signal.SIGKILL)
        killed = time.monotonic()

        async def until_answered(client, room_label):
            while True:
                try:
                    await client.call("chat-history", {"limit": 1}, timeout=30)
                    return round(time.monotonic() - killed, 2)
                except Exception:
                    await asyncio.sleep(0.02)

        small_t, big_t = await asyncio.gather(until_answered(small_viewer, "small"), until_answered(viewer, "big"))
        results["takeover_s_empty_room"] = small_t
        results["takeover_s_full_room"] = big_t
        # Count what the new home has.
        count = 0
        before = None
        while True:
            params = {"limit": 200}
            if before:
                params["before"] = before
            page = await viewer.call("chat-history", params)
            msgs = page["messages"]
            count += len(msgs)
            if not page["more"] or not msgs:
                break
            before = msgs[0]["message_id"]
        results["history_after_takeover"] = count
        with open(os.path.join(work, "n2.log")) as f:
            taken = [l for l in f if "taken over from its saved state" in l and "room=big" in l]
        m = re.search(r"bytes=(\d+)", taken[0]) if taken else None
        results["state_bytes"] = int(m.group(1)) if m else None
        print(json.dumps(results))
    finally:
        for proc, _ in nodes:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(5)
        nats.terminate()
        nats.wait(5)


asyncio.run(main())
