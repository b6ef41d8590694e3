"""The save window, measured (issue 33): how old is the oldest answered
message lost at a kill -9 of its room's home? A sender on node2 broadcasts every 50 ms into a
room homed on node1; node1 is killed at a random moment, restarted after
DOWN s; a checker on node3 reads the whole history. Prints, per round, the
oldest lost message's age before the kill (the save window seen).

    scripts/soak.sh sets up the venv; then, from the repository:
    .build-soak/venv/bin/python scripts/kill_window.py [ROOMD_BINARY]
    (ROUNDS=8, DOWN=3 seconds in the environment)"""
import asyncio, json, os, random, signal, sys, tempfile, time, types
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import soak
from websockets.asyncio.client import connect

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/debug/roomd")
ROUNDS = int(os.environ.get("ROUNDS", "10"))
DOWN = float(os.environ.get("DOWN", "3"))


async def peer(env, stats, node, room, user, role):
    """A joined `soak.Session` (the soak's client: calls matched by id, pushes read)."""
    ws = await connect(node.url, max_size=2 ** 24)
    p = soak.Session(ws, env, stats, node)
    a = await p.call("join", {"token": soak.app_token(env.secret, room, user, role)})
    assert "result" in a, a
    return p


async def history(p):
    ids, before = [], None
    while True:
        params = {"limit": 200}
        if before:
            params["before"] = before
        a = (await p.call("chat-history", params))["result"]
        msgs = a["messages"]
        ids = [m["message_id"] for m in msgs] + ids
        if not a.get("more") or not msgs:
            return ids
        before = msgs[0]["message_id"]


async def main():
    d = tempfile.mkdtemp(prefix="killwindow-")
    args = types.SimpleNamespace(binary=BIN, config=os.path.abspath("config/roles.json"), log_level="info",
                                 cores=False, cluster=3, drain_wait=30, answer_timeout=30)
    env = soak.Env(args, d)
    stats = soak.Stats()
    env.start()
    n1, n2, n3 = env.nodes
    rng = random.Random(7)
    try:
        for r in range(ROUNDS):
            room = f"kw-{r}"
            host = await peer(env, stats, n1, room, "h", "host")
            sender = await peer(env, stats, n2, room, "s", "host")
            answered = []  # (message_id, monotonic answered)
            stop = False

            async def send():
                while not stop:
                    t = time.monotonic()
                    try:
                        a = await sender.call("broadcast", {"info": {"message": f"m{len(answered)}"}})
                    except Exception:
                        return
                    if "result" in a:
                        answered.append((a["result"]["message_id"], time.monotonic()))
                    await asyncio.sleep(max(0, 0.05 - (time.monotonic() - t)))

            task = asyncio.create_task(send())
            await asyncio.sleep(rng.uniform(2, 4))
            killed_at = time.monotonic()
            n1.process.send_signal(signal.SIGKILL)
            n1.process.wait()
            n1.up = False
            await asyncio.sleep(DOWN)
            stop = True
            await task
            env.restart(n1)
            env.wait_for_cluster(30)
            checker = await peer(env, stats, n3, room, "c", "viewer")
            kept = set(await history(checker))
            lost = [(mid, killed_at - t) for mid, t in answered if t < killed_at and mid not in kept]
            before = [x for x in answered if x[1] < killed_at]
            worst = max((age for _, age in lost), default=0.0)
            print(f"round {r}: {len(before)} answered before the kill, {len(lost)} lost, "
                  f"oldest lost answered {worst * 1000:.0f} ms before the kill", flush=True)
            for p in (host, sender, checker):
                try:
                    await p.ws.close()
                except Exception:
                    pass
    finally:
        env.stop()


asyncio.run(main())
