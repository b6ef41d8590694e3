#!/usr/bin/env python3
"""Soak test: churn against one roomd for --minutes, sampling its RSS and open
file descriptors every 10 s into a CSV.

Started by `make soak MINUTES=30` (scripts/soak.sh sets up the venv). It
starts its own daemon (`--binary`, the shipped template, a fresh secret, port
0, loopback only) and runs --workers client loops over --rooms rooms. Each
loop, until the deadline, opens a WebSocket, joins a random room with a random
role, performs a random number of random actions (ACTIONS below) and ends the
session in one of three ways: `leave`, a WebSocket close without `leave`, or a
drop (the TCP connection torn down without a close frame). Every loop is
bounded in time (the deadline) and in sessions (--max-sessions).

Verdict: RSS and open fds are compared between the sample at the end of the
warm-up (5 minutes; half the run when it is shorter than 10 minutes) and the
median of the last three samples taken under load. Either growing by more than
--max-growth (10 %) fails the run (exit 1). A sample taken 5 s after the load
stops is reported too (fds should fall back to the idle count). A daemon that
dies, or an unexpected protocol error, also fails the run.

To extend: write `async def action_x(session)` and add it to ACTIONS with a
weight.
"""
import argparse
import asyncio
import base64
import csv
import hashlib
import hmac
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROLES = ["host", "guest", "moderator", "viewer"]
POLL_WRITERS = {"host", "moderator"}  # pollWrite in config/roles.json


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def app_token(secret: bytes, room: str, user: str, role: str) -> str:
    now = int(time.time())
    header = b64url(b'{"alg":"HS256","typ":"JWT"}')
    claims = {"type": "app", "version": 2, "room_id": room, "user_id": user, "role": role,
              "iat": now, "nbf": now - 1, "exp": now + 3 * 3600, "jti": str(uuid.uuid4())}
    body = b64url(json.dumps(claims, separators=(",", ":")).encode())
    mac = hmac.new(secret, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{b64url(mac)}"


class Stats:
    def __init__(self):
        self.counts = {}
        self.unexpected = []

    def add(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n


class Session:
    """One WebSocket peer: JSON-RPC calls matched to answers by id; pushes
    are read (and counted) as they come, so the daemon never sees a slow
    consumer."""

    def __init__(self, ws, stats):
        self.ws = ws
        self.stats = stats
        self.next_id = 0
        self.pending = {}
        self.done = False  # the session is over (e.g. the room was ended)
        self.peer_id = None
        self.room = None
        self.role = None
        self.others = set()
        self.tracks = []
        self.role_change_tokens = []
        self.polls = {}  # started polls heard of: poll_id -> questions
        self.own_polls = []  # polls this peer started
        self.reader = asyncio.create_task(self.read())

    async def read(self):
        try:
            async for text in self.ws:
                message = json.loads(text)
                if "id" in message and message["id"] in self.pending:
                    self.pending.pop(message["id"]).set_result(message)
                    continue
                self.stats.add("pushes")
                method = message.get("method", "")
                params = message.get("params") or {}
                if method == "on-peer-join":
                    peer = params.get("peer") or {}
                    if "peer_id" in peer:
                        self.others.add(peer["peer_id"])
                elif method == "on-peer-leave":
                    self.others.discard((params.get("peer") or params).get("peer_id"))
                elif method == "on-role-change-request" and "token" in params:
                    self.role_change_tokens.append(params["token"])
                elif method == "on-policy-change":
                    self.role = params.get("name", self.role)
                elif method == "on-poll-start":
                    for poll in params.get("polls", []):
                        if len(self.polls) < 100:
                            self.polls[poll["poll_id"]] = poll.get("questions") or []
                elif method == "on-poll-stop":
                    for poll in params.get("polls", []):
                        self.polls.pop(poll.get("poll_id"), None)
        except ConnectionClosed:
            pass
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))
            self.pending.clear()

    async def call(self, method, params=None, timeout=10):
        self.next_id += 1
        ident = self.next_id
        future = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        try:
            await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}))
        except BaseException:
            self.pending.pop(ident, None)
            if future.done():
                future.exception()  # the reader failed it as the connection closed: retrieved here
            raise
        answer = await asyncio.wait_for(future, timeout)
        self.stats.add("calls")
        if "error" in answer:
            self.stats.add(f"error {answer['error'].get('code')}")
        return answer

    async def close_reader(self):
        self.reader.cancel()
        try:
            await self.reader
        except (asyncio.CancelledError, Exception):
            pass


# --- actions: each gets a joined session; errors the protocol allows are counted, not fatal.

async def action_broadcast(s):
    await s.call("broadcast", {"info": {"message": "soak " + "x" * random.randint(0, 400)}})


async def action_direct_message(s):
    if s.others:
        await s.call("broadcast", {"info": {"message": "dm"}, "peer_id": random.choice(sorted(s.others))})


async def action_peer_update(s):
    await s.call("peer-update", {"name": f"soak-{random.randint(0, 999)}", "data": json.dumps({"n": random.random()})})


async def action_track(s):
    if s.tracks and random.random() < 0.5:
        await s.call("track-remove", {"track_id": s.tracks.pop()})
    else:
        track = f"t{random.randint(0, 1 << 30)}"
        answer = await s.call("track-add", {"track_id": track, "type": random.choice(["audio", "video"])})
        if "result" in answer:
            s.tracks.append(track)


async def action_audio_level(s):
    if s.tracks:
        await s.ws.send(json.dumps({"jsonrpc": "2.0", "method": "audio-level",
                                    "params": {"levels": [{"track_id": s.tracks[0], "level": random.randint(0, 100)}]}}))


async def action_role_change(s):
    if s.role_change_tokens:
        await s.call("role-change", {"token": s.role_change_tokens.pop()})
    elif s.others:
        await s.call("role-change-request", {"requested_for": random.choice(sorted(s.others)),
                                             "role": random.choice(ROLES), "force": random.random() < 0.5})


async def action_ping(s):
    await s.call("ping", {"timestamp": int(time.time() * 1000)})


SESSION_KEYS = [f"k{i}" for i in range(24)]


async def action_session_store(s):
    """Session store (PROTOCOL.md section 14): set, delete, read and listen to 24 keys."""
    r = random.random()
    key = random.choice(SESSION_KEYS)
    if r < 0.5:
        await s.call("set-metadata", {"key": key, "value": {"n": random.randint(0, 1 << 20),
                                                           "text": "v" * random.randint(0, 300)}})
    elif r < 0.65:
        await s.call("set-metadata", {"key": key, "value": None})
    elif r < 0.85:
        await s.call("get-metadata", {"key": key} if random.random() < 0.7 else {})
    else:
        keys = random.choice([["*"], [], random.sample(SESSION_KEYS, random.randint(1, 6))])
        await s.call("listen-metadata-change", {"keys": keys})


def poll_questions(quiz):
    questions = []
    for i in range(random.randint(1, 3)):
        kind = random.choice(["single-choice", "multiple-choice", "short-answer"])
        question = {"question": {"text": f"q{i} " + "?" * random.randint(0, 40), "type": kind,
                                 "skippable": random.random() < 0.3}}
        if kind != "short-answer":
            n = random.randint(2, 5)
            question["options"] = [{"text": f"o{k}"} for k in range(n)]
            if quiz and kind == "single-choice":
                question["answer"] = {"option": random.randint(1, n)}
            elif quiz:
                question["answer"] = {"options": sorted(random.sample(range(1, n + 1), random.randint(1, n)))}
        questions.append(question)
    return questions


def poll_responses(questions):
    responses = []
    for q in questions:
        entry = {"question": q.get("index"), "duration": random.randint(100, 5000)}
        options = len(q.get("options") or [])
        if q.get("skippable") and random.random() < 0.2:
            entry["skipped"] = True
        elif q.get("type") == "single-choice" and options:
            entry["option"] = random.randint(1, options)
        elif q.get("type") == "multiple-choice" and options:
            entry["options"] = sorted(random.sample(range(1, options + 1), random.randint(1, options)))
        else:
            entry["text"] = "soak"
        responses.append(entry)
    return responses


async def action_poll(s):
    """Polls and quizzes (PROTOCOL.md section 15): writers create, start and
    stop them (each stops by itself after 5-60 s); everyone votes on the
    started ones it heard of and reads lists and results."""
    r = random.random()
    if s.role in POLL_WRITERS and r < 0.15:
        if s.own_polls and random.random() < 0.3:
            await s.call("poll-stop", {"poll_id": s.own_polls.pop()})
            return
        quiz = random.random() < 0.5
        answer = await s.call("poll-info-set", {"title": f"soak {random.randint(0, 999)}",
                                                "type": "quiz" if quiz else "poll",
                                                "duration": random.randint(5, 60),
                                                "visibility": random.random() < 0.5})
        if "result" not in answer:
            return  # e.g. 40907: max_polls in this room session
        poll_id = answer["result"]["poll_id"]
        await s.call("poll-questions-set", {"poll_id": poll_id, "questions": poll_questions(quiz)})
        if random.random() < 0.9 and "result" in await s.call("poll-start", {"poll_id": poll_id}):
            s.own_polls.append(poll_id)
    elif s.polls and r < 0.8:
        poll_id = random.choice(sorted(s.polls))
        await s.call("poll-response", {"poll_id": poll_id, "responses": poll_responses(s.polls[poll_id])})
    elif s.polls and r < 0.9:
        await s.call("poll-result", {"poll_id": random.choice(sorted(s.polls))})
    else:
        await s.call("poll-list", {"state": "started"} if random.random() < 0.5 else {})


async def action_end_room(s):
    """Rare: a host ends the room (everyone closed 4002, not locked); the next
    join starts a new session, so polls and the session store start over."""
    if s.role == "host":
        answer = await s.call("end-room", {"reason": "soak"})
        if "result" in answer:
            s.stats.add("rooms ended")
            s.done = True


# (weight, action).
ACTIONS = [
    (5, action_broadcast),
    (2, action_direct_message),
    (2, action_peer_update),
    (3, action_track),
    (2, action_audio_level),
    (2, action_role_change),
    (1, action_ping),
    (3, action_session_store),
    (3, action_poll),
    (0.015, action_end_room),  # about once every 1-2 minutes per room
]


async def worker(index, args, url, secret, deadline, stats):
    rng = random.Random(args.seed * 1000 + index)
    sessions = 0
    while time.monotonic() < deadline and sessions < args.max_sessions:
        sessions += 1
        room = f"soak-{rng.randrange(args.rooms)}"
        role = rng.choice(ROLES)
        user = f"w{index}-{sessions}"
        try:
            ws = await asyncio.wait_for(connect(url, max_size=2 ** 22, open_timeout=10, ping_interval=None), 15)
        except Exception as error:  # noqa: BLE001 - counted; the verdict checks the daemon
            stats.add("connect failures")
            await asyncio.sleep(1)
            continue
        session = Session(ws, stats)
        try:
            answer = await session.call("join", {"token": app_token(secret, room, user, role)})
            if "result" not in answer:
                stats.unexpected.append(f"join failed: {answer.get('error')}")
                continue
            stats.add("joins")
            session.peer_id = answer["result"]["peer"]["peer_id"]
            session.role = answer["result"]["peer"].get("role")
            session.others = {p["peer_id"] for p in answer["result"].get("peers", [])}
            for _ in range(rng.randint(1, args.max_actions)):
                if time.monotonic() >= deadline or session.done:
                    break
                action = rng.choices([a for _, a in ACTIONS], weights=[w for w, _ in ACTIONS])[0]
                await action(session)
                stats.add("actions")
                await asyncio.sleep(rng.uniform(0.02, 0.2))
            ending = rng.random()
            if session.done:
                pass  # the room was ended: the daemon closes the connection
            elif ending < 0.5:
                await session.call("leave", {"reason": "soak"})
                stats.add("leaves")
            elif ending < 0.75:
                await ws.close()
                stats.add("closes without leave")
            else:
                ws.transport.abort()  # no close frame: the daemon sees the TCP connection go
                stats.add("drops")
        except (ConnectionClosed, ConnectionError) as error:
            stats.add("closed by daemon")  # e.g. 4001/4002 after a role change or removal
        except asyncio.TimeoutError:
            stats.unexpected.append(f"worker {index}: a call got no answer in 10 s")
        finally:
            await session.close_reader()
            try:
                await asyncio.wait_for(ws.close(), 5)
            except Exception:  # noqa: BLE001
                pass


def sample(pid):
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds


async def sampler(pid, args, started, deadline, stats, rows, writer, file):
    while True:
        elapsed = time.monotonic() - started
        rss, fds = sample(pid)
        row = {"elapsed_s": round(elapsed), "rss_kib": rss, "fds": fds, "load": int(time.monotonic() < deadline),
               "joins": stats.counts.get("joins", 0), "calls": stats.counts.get("calls", 0),
               "pushes": stats.counts.get("pushes", 0)}
        rows.append(row)
        writer.writerow(row)
        file.flush()
        print(f"soak: {row['elapsed_s']:5d}s  rss {rss / 1024:7.1f} MiB  fds {fds:4d}  joins {row['joins']}"
              f"  calls {row['calls']}  pushes {row['pushes']}", flush=True)
        if time.monotonic() >= deadline:
            return
        await asyncio.sleep(min(10.0, max(0.0, deadline - time.monotonic())))


def start_daemon(args, directory):
    secret = os.urandom(32)
    secret_file = os.path.join(directory, "secret")
    with open(secret_file, "wb") as f:
        f.write(secret)
    log = open(os.path.join(directory, "roomd.log"), "wb")
    process = subprocess.Popen([args.binary, "--config", args.config, "--host", "127.0.0.1", "--port", "0",
                                "--secret-file", secret_file, "--log-level", "warning"],
                               stdout=subprocess.PIPE, stderr=log)
    line = process.stdout.readline().decode().strip()
    prefix = "roomd listening on ws://127.0.0.1:"
    if not line.startswith(prefix):
        process.kill()
        sys.exit(f"soak: roomd did not start: {line!r}")
    port = int(line[len(prefix):].split("/")[0])
    return process, secret, f"ws://127.0.0.1:{port}/ws"


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--binary", default=".build/debug/roomd")
    parser.add_argument("--config", default="config/roles.json")
    parser.add_argument("--workers", type=int, default=40)
    parser.add_argument("--rooms", type=int, default=6)
    parser.add_argument("--max-actions", type=int, default=30, help="actions per session, at most")
    parser.add_argument("--max-sessions", type=int, default=100_000, help="sessions per worker, at most")
    parser.add_argument("--max-growth", type=float, default=0.10)
    parser.add_argument("--csv", default=".build-soak/soak.csv")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if not 0 < args.minutes <= 24 * 60:
        sys.exit("soak: --minutes must be in (0, 1440]")
    warmup = 300 if args.minutes >= 10 else args.minutes * 30

    directory = tempfile.mkdtemp(prefix="roomd-soak-")
    process, secret, url = start_daemon(args, directory)
    print(f"soak: roomd pid {process.pid} on {url}, {args.workers} workers over {args.rooms} rooms for "
          f"{args.minutes:g} min; warm-up {warmup:g} s; log {directory}/roomd.log; samples {args.csv}", flush=True)
    os.makedirs(os.path.dirname(args.csv) or ".", exist_ok=True)
    stats = Stats()
    rows = []
    started = time.monotonic()
    deadline = started + args.minutes * 60
    failed = []
    with open(args.csv, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=["elapsed_s", "rss_kib", "fds", "load", "joins", "calls", "pushes"])
        writer.writeheader()
        try:
            workers = [asyncio.create_task(worker(i, args, url, secret, deadline, stats)) for i in range(args.workers)]
            await sampler(process.pid, args, started, deadline, stats, rows, writer, file)
            await asyncio.wait_for(asyncio.gather(*workers, return_exceptions=True), 60)
            await asyncio.sleep(5)
            rss, fds = sample(process.pid)
            after = {"elapsed_s": round(time.monotonic() - started), "rss_kib": rss, "fds": fds, "load": 0,
                     "joins": stats.counts.get("joins", 0), "calls": stats.counts.get("calls", 0),
                     "pushes": stats.counts.get("pushes", 0)}
            writer.writerow(after)
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            failed.append("roomd died during the run")
            after = None
        finally:
            alive = process.poll() is None
            if alive:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    failed.append("roomd did not stop within 10 s of SIGTERM")
            else:
                failed.append(f"roomd exited during the run (status {process.returncode})")

    print("soak: counts " + ", ".join(f"{k} {v}" for k, v in sorted(stats.counts.items())))
    base = next((r for r in rows if r["elapsed_s"] >= warmup), None)
    loaded = [r for r in rows if r["load"]]
    if base is None or len(loaded) < 3 or base is loaded[-1]:
        failed.append("too few samples after the warm-up to judge growth")
    else:
        tail = loaded[-3:]
        for key in ("rss_kib", "fds"):
            start, at_base, end = rows[0][key], base[key], statistics.median(r[key] for r in tail)
            growth = (end - at_base) / at_base
            print(f"soak: {key}: start {start}, at {base['elapsed_s']} s {at_base}, end (median of last 3 under load) "
                  f"{end:g}, growth {growth * 100:+.1f} %" + (f", after the load {after[key]}" if after else ""))
            if growth > args.max_growth:
                failed.append(f"{key} grew {growth * 100:.1f} % after the warm-up (limit {args.max_growth * 100:g} %)")
    for problem in stats.unexpected[:10]:
        print(f"soak: unexpected: {problem}")
    if len(stats.unexpected) > 10:
        print(f"soak: … {len(stats.unexpected) - 10} more unexpected")
    if stats.unexpected:
        failed.append(f"{len(stats.unexpected)} unexpected protocol outcome(s)")
    if failed:
        print("soak: FAILED: " + "; ".join(failed))
        return 1
    print("soak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
