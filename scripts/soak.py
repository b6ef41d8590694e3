#!/usr/bin/env python3
"""Soak test: churn against one roomd, or a cluster of roomd nodes, for
--minutes, sampling RSS and open file descriptors every 10 s into a CSV.

Started by `make soak MINUTES=30` (`CLUSTER=1` for the cluster; scripts/soak.sh
sets up the venv). Everything listens on 127.0.0.1 only.

One daemon (the default): it starts `--binary` with the shipped template, a
fresh secret and port 0, and runs --workers client loops over --rooms rooms.
Each loop, until the deadline, opens a WebSocket, joins a random room with a
random role, performs a random number of random actions (ACTIONS below) and
ends the session in one of three ways: `leave`, a WebSocket close without
`leave`, or a drop (the TCP connection torn down without a close frame).
Every loop is bounded in time (the deadline) and in sessions (--max-sessions).

A cluster (`--cluster 3`): it starts nats-server with JetStream (a free
loopback port, its store in the run's temporary directory, deleted at the
end) and 3 nodes
(`--cluster nats://… --node-id node1…3`), and waits until every node's
/healthz counts them all. Every connection goes where a least-connections
load balancer would send it: the live node with the fewest of the soak's
connections (so rooms, homed where their first peer joined, stay spread over
the nodes however many drains moved clients; a node that refuses the
connection is skipped for another). Every --kill-every seconds a node
(one of those after the first --steady; by default the last one) is killed
with SIGKILL, stays down for a random time in --down-seconds, and is started
again with the same --node-id and port; it must be counted by every node
(`/healthz` `nodes: 3`) within --rejoin-timeout. A client whose connection
ends without a close frame (its node died) or with a code that keeps its peer
in the reconnect grace (1001, 4008, …) reconnects to another node (the
least-connected of the others) and
resumes with its `peer_id`, as a real client does; a resume refused with
41001 (the grace is over, or the room was lost) joins anew. A `join` answered
5003 (the room's home is being replaced) is sent again after 0.5 s. Samples
have a column per node (RSS, fds, run number), nats-server's RSS and
JetStream's message and byte counts (the KV buckets), in soak-cluster.csv.

Drains (`--drain-every S`, `make soak CLUSTER=1` passes DRAIN_EVERY=180):
every S seconds, the first at S/2 so that they fall between kills of the same
period, a node after the first --drain-steady (node2 or node3 by default; node1
stays up and is judged for growth) gets SIGTERM: it hands its rooms over and
closes its clients with 1012. It must exit with status 0 within --drain-wait
(30 s); it is started again at once and must be counted by every node. Kills
and drains never overlap (one waits for the other's restart). While a node
drains, new connections go to the others; a client closed 1012 resumes with
its `peer_id` on another node like after any resumable close (counted as
"resumes after 1012"; a 41001 there is unexpected unless the join anew
finds a new session of the room: its host ended it meanwhile). 5003 is counted apart:
"5003 around a kill" (while a killed node is down and 30 s after it rejoined)
or, anywhere else and so around every drain, an unexpected outcome.

No answered message lost (cluster): every `broadcast` to everyone that is
answered goes in a ledger (room, room session, message_id, timestamp). After
every kill and drain, and at the end, a checker joins every room as a viewer
on a live node and reads its whole history (`chat-history`, section 19, the
ring of 200); every message answered in that room session before the read
must be in it, except those older than the oldest kept once the ring is full.
A message timestamped (by its home) less than 2 s before a kill -9 may be lost (its home's last
save, at most 1 s old, came before it): counted apart; any other is lost and
fails the run.

Verdict (exit 1 on any failure):
- Flat memory: RSS and open fds are compared between the sample at the end of
  the warm-up (half the run, at most 15 minutes: a daemon's bounded state —
  resume buffers, feed windows, histories — fills for ~7 minutes under this
  load before its RSS levels off, ~15 for a node whose homes change) and
  the median of the last three samples taken under load. Either growing by
  more than --max-growth (10 %) fails. With a cluster this is judged for the
  nodes that are never killed, on settled samples only (every node up, the
  last restart at least 20 s old), since a dead node's clients crowd the
  others for a while; and from the first settled sample after the warm-up
  (at least 10 minutes before the end) in which the node was home of as many
  rooms as at the end (`roomd_rooms`, a column per node): rooms never move
  back, so over a run of drains the node that stays up becomes home of more
  of them and holds more. A sample taken 5 s after the load stops is
  reported too (fds should fall back to the idle count).
- No unanswered call: every call gets a result or an error within
  --answer-timeout (10 s for one daemon, 30 s for a cluster). A call on a
  connection that closes is not unanswered (it is counted, with the close
  code or "node killed"); a 5003 is an answer, but one given when no node
  was killed in the last 30 s (or for one daemon at all) is unexpected.
- An answered message missing from its room's history (above), a drain
  that does not end with exit status 0 within --drain-wait, or a 1012 close
  from a node that was not drained.
- A node that dies without being killed (or drained), a restarted node that does not
  rejoin (or one of its runs that serves no join), a join or resume with an
  unexpected answer, or a node that does not stop within 10 s of SIGTERM at
  the end fails the run.

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
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

ROLES = ["host", "guest", "moderator", "viewer"]
POLL_WRITERS = {"host", "moderator"}  # pollWrite in config/roles.json
# Close codes after which the peer is still in its reconnect grace (PROTOCOL.md
# section 1): a real client resumes. None: no close frame (the node died, or
# the connection broke).
RESUMABLE = {None, 1001, 1003, 1006, 1007, 1009, 1011, 1012, 4008, 4029}
SETTLE_S = 20  # a cluster sample counts for the growth verdict this long after a restart
TAKEOVER_S = 30  # 5003 answers are expected until this long after a restarted node rejoined
SAVE_WINDOW_S = 2  # a message answered this long before a kill -9 may be lost (the save window is 1 s)
HISTORY_SIZE = 200  # settings.chat.history_size of config/roles.json (the default)


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
        self.unanswered = []
        self.slowest = 0.0

    def add(self, key, n=1):
        self.counts[key] = self.counts.get(key, 0) + n


class Node:
    """One roomd process (a cluster node, or the single daemon), restartable on its port."""

    def __init__(self, name, cluster_args):
        self.name = name
        self.cluster_args = cluster_args
        self.port = 0
        self.process = None
        self.run = 0  # incremented at every start
        self.up = False
        self.restarts = 0
        self.joins = 0  # joins and resumes on this run
        self.runs = []  # (run, pid, last rss KiB, last fds, joins) of the runs that ended
        self.cwd = None  # the working directory of the current run
        self.draining = False  # SIGTERM sent, not exited yet
        self.killed_runs = set()  # runs ended by SIGKILL
        self.drained_runs = set()  # runs ended by SIGTERM (a drain)
        self.clients = 0  # the soak's connections open to this node now (least-connections balancing)

    @property
    def url(self):
        return f"ws://127.0.0.1:{self.port}/ws"

    def start(self, env, port):
        """Starts roomd on `port` (0: a free one); False when it does not say it listens.
        Each run has a directory of its own as its working directory, where a
        crash leaves its core file (core_pattern `core`)."""
        self.cwd = os.path.join(env.directory, f"{self.name}-run{self.run + 1}")
        os.makedirs(self.cwd, exist_ok=True)
        with open(env.log_path(self), "ab") as log:
            log.write(f"--- soak: start {self.name} run {self.run + 1} on port {port or 'free'}\n".encode())
            log.flush()
            process = subprocess.Popen([env.args.binary, "--config", env.args.config, "--host", "127.0.0.1",
                                        "--port", str(port), "--secret-file", env.secret_file,
                                        "--log-level", env.args.log_level] + self.cluster_args,
                                       stdout=subprocess.PIPE, stderr=log, cwd=self.cwd,
                                       preexec_fn=allow_core_dumps if env.args.cores else None)
        line = process.stdout.readline().decode().strip()
        prefix = "roomd listening on ws://127.0.0.1:"
        if not line.startswith(prefix):
            process.kill()
            process.wait()
            return False
        self.port = int(line[len(prefix):].split("/")[0])
        self.process = process
        self.run += 1
        self.joins = 0
        self.up = True
        return True


class Env:
    """The daemon or the cluster under test, and what the clients may know of it."""

    def __init__(self, args, directory):
        self.args = args
        self.directory = directory
        self.secret = os.urandom(32)
        self.secret_file = os.path.join(directory, "secret")
        with open(self.secret_file, "wb") as f:
            f.write(self.secret)
        self.cluster = args.cluster > 0
        self.nats = None
        self.nats_port = None
        self.monitor_port = None
        self.nodes = []
        self.kills = []  # dicts: node, at, down, rejoined (s after the restart) or None
        self.drains = []  # dicts: node, at, exit status, took (s to exit), rejoined
        self.ledger = {}  # (room, session_id) -> [(message_id, timestamp ms, answered at monotonic)]
        self.checks = []  # message checks: label, checked, lost, lost around a kill
        self.kept_ids, self.lost_ids, self.lost_kill_ids = set(), set(), set()  # distinct messages, every check
        self.closes = []  # (s since the start, node, code, last kill or drain) of closes other than the usual
        self.started = time.monotonic()  # set again when the load starts
        self.unexpected_5003_at = {}  # s since the start -> count of 5003 answers not around a kill
        self.expect_5003_until = 0.0  # monotonic; inf while a node is down
        self.settled_from = 0.0  # monotonic; samples before this are not judged
        self.failed = []

    def last_event(self):
        """'4.0 s after the kill of node3 began' (the latest kill or drain), or 'no kill or drain yet'."""
        last = max(self.kills + self.drains, key=lambda e: e["mono"], default=None)
        return f"{time.monotonic() - last['mono']:.1f} s after the {last['kind']} of {last['node']} began" \
            if last else "no kill or drain yet"

    def log_path(self, node):
        return os.path.join(self.directory, f"{node.name}.log")

    def expects_5003(self):
        return self.cluster and time.monotonic() < self.expect_5003_until

    # --- nats-server

    def start_nats(self):
        binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        if not os.access(binary, os.X_OK):
            sys.exit("soak: no nats-server (make deps installs it; Debian puts it in /usr/sbin)")
        for _ in range(3):  # a free port can be taken between the probe and the bind
            self.nats_port, self.monitor_port = free_port(), free_port()
            log = open(os.path.join(self.directory, "nats-server.log"), "ab")
            self.nats = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(self.nats_port), "-js",
                                          "-sd", os.path.join(self.directory, "nats-store"),
                                          "-m", str(self.monitor_port)], stdout=log, stderr=log)
            log.close()
            give_up = time.monotonic() + 10
            while time.monotonic() < give_up and self.nats.poll() is None:
                if http_json(self.monitor_port, "/healthz") is not None:
                    return
                time.sleep(0.05)
            self.nats.kill()
            self.nats.wait()
        sys.exit(f"soak: nats-server did not start (log {self.directory}/nats-server.log)")

    def jetstream(self):
        """(messages, bytes) in nats-server's JetStream (the KV buckets), or (None, None)."""
        info = http_json(self.monitor_port, "/jsz") if self.nats else None
        return (info.get("messages"), info.get("bytes")) if info else (None, None)

    # --- nodes

    def start(self):
        if not self.cluster:
            node = Node("roomd", [])
            if not node.start(self, 0):
                sys.exit(f"soak: roomd did not start (log {self.log_path(node)})")
            self.nodes = [node]
            return
        self.start_nats()
        for i in range(1, self.args.cluster + 1):
            node = Node(f"node{i}", ["--cluster", f"nats://127.0.0.1:{self.nats_port}", "--node-id", f"node{i}"])
            if not node.start(self, 0):
                self.stop()
                sys.exit(f"soak: {node.name} did not start (log {self.log_path(node)})")
            self.nodes.append(node)
        if self.wait_for_cluster(30) is None:
            self.stop()
            sys.exit(f"soak: the nodes did not see each other within 30 s (logs in {self.directory})")

    def wait_for_cluster(self, timeout):
        """Seconds until every node's /healthz counts every node on a connected bus; None on timeout."""
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            if all(node_counts(self, node) == len(self.nodes) for node in self.nodes):
                return time.monotonic() - began
            time.sleep(0.2)
        return None

    def restart(self, node):
        """The same --node-id on the same port (a few tries; a free port if it stays taken)."""
        for attempt in range(6):
            if node.start(self, node.port if attempt < 5 else 0):
                return True
            time.sleep(0.5)
        return False

    def stop(self):
        for node in self.nodes:
            if node.up and node.process.poll() is None:
                node.process.terminate()
        for node in self.nodes:
            if node.up:
                try:
                    node.process.wait(self.args.drain_wait)
                except subprocess.TimeoutExpired:
                    node.process.kill()
                    self.failed.append(f"{node.name} did not stop within {self.args.drain_wait:g} s of SIGTERM")
                node.up = False
        if self.nats and self.nats.poll() is None:
            self.nats.terminate()
            try:
                self.nats.wait(10)
            except subprocess.TimeoutExpired:
                self.nats.kill()


def allow_core_dumps():
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def exit_status(returncode):
    return f"killed by {signal.Signals(-returncode).name}" if returncode < 0 else f"exit status {returncode}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_json(port, path):
    """GET http://127.0.0.1:port/path: the JSON body (of a 503 too), or None."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            return json.loads(error.read())
        except ValueError:
            return None
    except (OSError, ValueError):
        return None


def node_counts(env, node):
    """The number of nodes `node`'s /healthz counts on a connected bus (None if it cannot tell)."""
    if not node.up:
        return None
    health = http_json(node.port, "/healthz") or {}
    cluster = health.get("cluster") or {}
    return cluster.get("nodes") if cluster.get("connected") else None


class Session:
    """One WebSocket peer: JSON-RPC calls matched to answers by id; pushes
    are read (and counted) as they come, so the daemon never sees a slow
    consumer."""

    def __init__(self, ws, env, stats, node):
        self.ws = ws
        self.env = env
        self.stats = stats
        self.node = node
        self.run = node.run
        self.next_id = 0
        self.pending = {}
        self.close_code = None  # from the close frame roomd sent; None: none came
        self.lost_calls = 0  # calls unanswered when the connection closed
        self.ended_by_us = False
        self.done = False  # the session is over (e.g. the room was ended)
        self.peer_id = None
        self.room = None
        self.session_id = None  # the room session's (join result), for the message ledger
        self.user = None
        self.role = None
        self.others = set()
        self.tracks = []
        self.role_change_tokens = []
        self.polls = {}  # started polls heard of: poll_id -> questions
        self.own_polls = []  # polls this peer started
        node.clients += 1
        self.reader = asyncio.create_task(self.read())

    def joined(self, answer, room, user):
        result = answer["result"]
        if self.node.run == self.run:
            self.node.joins += 1
        self.room, self.user = room, user
        self.peer_id = result["peer"]["peer_id"]
        self.session_id = (result.get("room") or {}).get("session_id")
        self.role = result["peer"].get("role")
        self.others = {p["peer_id"] for p in result.get("peers", [])}

    def adopt(self, old):
        """A resumed peer: what the client knew of its room carries over."""
        self.tracks, self.role_change_tokens = old.tracks, old.role_change_tokens
        self.polls, self.own_polls = old.polls, old.own_polls

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
            self.node.clients -= 1
            # Iterating ends quietly on 1000, 1001 and no close frame: the code is the frame's.
            rcvd = getattr(self.ws.protocol, "close_rcvd", None)
            self.close_code = rcvd.code if rcvd else None
            self.lost_calls = len(self.pending)
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("closed"))
            self.pending.clear()

    async def call(self, method, params=None):
        self.next_id += 1
        ident = self.next_id
        future = asyncio.get_running_loop().create_future()
        self.pending[ident] = future
        sent = time.monotonic()
        try:
            await self.ws.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}))
        except BaseException:
            self.pending.pop(ident, None)
            if future.done():
                future.exception()  # the reader failed it as the connection closed: retrieved here
            raise
        try:
            answer = await asyncio.wait_for(future, self.env.args.answer_timeout)
        except TimeoutError:
            self.pending.pop(ident, None)
            self.stats.add("unanswered calls")
            raise Unanswered(method, self)
        took = time.monotonic() - sent
        self.stats.slowest = max(self.stats.slowest, took)
        if took > 1:
            self.stats.add("answers after more than 1 s")
        self.stats.add("calls")
        if "error" in answer:
            code = answer["error"].get("code")
            self.stats.add(f"error {code}")
            if code == 5003 and self.env.expects_5003():
                self.stats.add("5003 around a kill")
            elif code == 5003:
                self.stats.add("5003 not around a kill")
                at = round(time.monotonic() - self.env.started)
                self.env.unexpected_5003_at[at] = self.env.unexpected_5003_at.get(at, 0) + 1
                drain = self.env.drains[-1] if self.env.drains else None
                since = f", {time.monotonic() - drain['mono']:.0f} s after the drain of {drain['node']} began" \
                    if drain else ""
                self.stats.unexpected.append(f"{method} on {self.node.name} answered 5003 with no node killed"
                                             f"{since} ({answer['error'].get('message')})")
        return answer

    async def close_reader(self):
        self.reader.cancel()
        try:
            await self.reader
        except (asyncio.CancelledError, Exception):
            pass


class Unanswered(Exception):
    def __init__(self, method, session):
        super().__init__(method)
        self.method = method
        self.session = session


# --- actions: each gets a joined session; errors the protocol allows are counted, not fatal.

async def action_broadcast(s):
    """To everyone: kept in the room's history (section 19); an answered one
    goes in the ledger, which check_messages compares with the history."""
    answer = await s.call("broadcast", {"info": {"message": "soak " + "x" * random.randint(0, 400)}})
    result = answer.get("result")
    if result and result.get("message_id") and s.session_id:
        s.stats.add("messages answered")
        s.env.ledger.setdefault((s.room, s.session_id), []).append(
            (result["message_id"], result.get("timestamp") or 0, time.monotonic()))


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


def least_connections(nodes, rng):
    """`nodes` in the order a least-connections load balancer tries them: the
    live ones with the fewest of the soak's connections first (ties at
    random), then the down ones. Without it the node that is never drained
    ends up with every client that a drain sends away, and home of every
    room (the adopter is the node with most of a room's clients): its RSS
    grows with what it holds, which the growth rule cannot tell from a leak."""
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    return sorted(shuffled, key=lambda n: (not n.up, n.clients))


async def open_session(env, stats, nodes):
    """A connection to the first of `nodes` that takes it (a draining node,
    which refuses upgrades, is tried last); None if none does."""
    for node in sorted(nodes, key=lambda n: n.draining):
        try:
            ws = await asyncio.wait_for(connect(node.url, max_size=2 ** 22, open_timeout=10, ping_interval=None), 15)
        except Exception:  # noqa: BLE001 - counted; the verdict checks the daemon
            stats.add("connects refused (node down)" if env.cluster and not node.up
                      else "connects refused (node draining)" if node.draining else "connect failures")
            continue
        return Session(ws, env, stats, node)
    return None


async def join(session, params):
    """`join`, sent again after 0.5 s while it is answered 5003 (a home being replaced)."""
    give_up = time.monotonic() + session.env.args.answer_timeout
    while True:
        answer = await session.call("join", params)
        if "result" in answer or answer["error"].get("code") != 5003 or time.monotonic() > give_up:
            return answer
        await asyncio.sleep(0.5)


async def end(session):
    session.ended_by_us = True
    await session.close_reader()
    try:
        await asyncio.wait_for(session.ws.close(), 5)
    except Exception:  # noqa: BLE001
        pass


async def closed_how(old, env, stats):
    """A connection ended without our asking: counts how (its node was
    killed, or roomd closed it with a code) and returns the code."""
    await asyncio.wait({old.reader}, timeout=5)
    code = old.close_code
    killed = env.cluster and old.run in old.node.killed_runs
    how = "lost with a killed node" if killed else f"closed by roomd {code or 'without a close frame'}"
    if code == 1012 and old.run not in old.node.drained_runs:
        stats.unexpected.append(f"{old.node.name} closed a connection with 1012 without a drain")
    stats.add(f"connections {how}")
    if not killed and code not in (1000, 1012, 4001, 4002, 4003):
        env.closes.append(f"{old.node.name} (run {old.run}) closed a connection {code or 'without a close frame'} "
                          f"{env.last_event()}")
    if old.lost_calls:
        stats.add(f"calls on connections {how}", old.lost_calls)
    return code


async def after_close(old, env, stats, rng):
    """The connection of a joined session ended without our asking. Counts how,
    and resumes the peer on another node (or joins anew) when a real client
    would. Returns the session to go on with, or None."""
    code = await closed_how(old, env, stats)
    if code not in RESUMABLE:
        return None  # 4001/4002 removed or room ended, 4003 replaced, 1000 after leave
    order = least_connections([n for n in env.nodes if n is not old.node], rng)
    order.append(old.node)
    token = app_token(env.secret, old.room, old.user, rng.choice(ROLES))
    give_up = time.monotonic() + env.args.answer_timeout
    attempt = 0
    while time.monotonic() < give_up:
        session = await open_session(env, stats, [order[attempt % len(order)]])
        attempt += 1
        if session is None:
            await asyncio.sleep(0.2)
            continue
        try:
            answer = await join(session, {"token": token, "peer_id": old.peer_id})
            if "result" in answer and answer["result"].get("resumed"):
                stats.add("resumes")
                if code == 1012:
                    stats.add("resumes after 1012")
                session.joined(answer, old.room, old.user)
                session.adopt(old)
                return session
            if answer.get("error", {}).get("code") == 41001:
                stats.add("resumes refused 41001, joined anew")
                answer = await join(session, {"token": token})
                if "result" in answer:
                    stats.add("joins")
                    session.joined(answer, old.room, old.user)
                    if code == 1012 and session.session_id == old.session_id:
                        stats.unexpected.append(
                            f"resume of {old.peer_id} in {old.room} after a 1012 close refused 41001 on "
                            f"{session.node.name}, the room's session unchanged ({env.last_event()})")
                    elif code == 1012:
                        stats.add("resumes after 1012 refused 41001: the room ended meanwhile")
                    return session
                if code == 1012:
                    stats.unexpected.append(f"resume after a 1012 close refused 41001 on {session.node.name}, "
                                            f"then the join answered {answer.get('error')}")
            stats.unexpected.append(f"resume on {session.node.name} answered {answer.get('error') or answer}")
        except (ConnectionClosed, ConnectionError):
            await closed_how(session, env, stats)
        except Unanswered:
            await end(session)
            raise
        await end(session)
        return None
    stats.unexpected.append(f"could not reconnect to any node within {env.args.answer_timeout:g} s")
    return None


async def worker(index, env, deadline, stats):
    args = env.args
    rng = random.Random(args.seed * 1000 + index)
    sessions = 0
    while time.monotonic() < deadline and sessions < args.max_sessions:
        sessions += 1
        room = f"soak-{rng.randrange(args.rooms)}"
        role = rng.choice(ROLES)
        user = f"w{index}-{sessions}"
        session = await open_session(env, stats, least_connections(env.nodes, rng))
        if session is None:
            await asyncio.sleep(1)
            continue
        try:
            answer = await join(session, {"token": app_token(env.secret, room, user, role)})
            if "result" not in answer:
                stats.unexpected.append(f"join failed: {answer.get('error')}")
                continue
            stats.add("joins")
            session.joined(answer, room, user)
            actions = rng.randint(1, args.max_actions)
            while actions > 0 and time.monotonic() < deadline and not session.done:
                action = rng.choices([a for _, a in ACTIONS], weights=[w for w, _ in ACTIONS])[0]
                try:
                    await action(session)
                except (ConnectionClosed, ConnectionError):
                    resumed = await after_close(session, env, stats, rng)
                    if resumed is None:
                        break
                    await end(session)
                    session = resumed
                    continue
                actions -= 1
                stats.add("actions")
                await asyncio.sleep(rng.uniform(0.02, 0.2))
            else:
                if session.done:
                    continue
                ending = rng.random()
                try:
                    if ending < 0.5:
                        await session.call("leave", {"reason": "soak"})
                        stats.add("leaves")
                    elif ending < 0.75:
                        session.ended_by_us = True
                        await session.ws.close()
                        stats.add("closes without leave")
                    else:
                        session.ended_by_us = True
                        session.ws.transport.abort()  # no close frame: the daemon sees the TCP connection go
                        stats.add("drops")
                except (ConnectionClosed, ConnectionError):
                    await closed_how(session, env, stats)  # e.g. its node was killed just now
        except (ConnectionClosed, ConnectionError):
            await closed_how(session, env, stats)  # before the join was answered
        except Unanswered as error:
            last = max(env.kills + env.drains, key=lambda e: e["mono"], default=None)
            since = f" ({time.monotonic() - last['mono']:.0f} s after the {last['kind']} of {last['node']})" \
                if last else ""
            stats.unanswered.append(f"worker {index}: {error.method} on {error.session.node.name} got no answer in "
                                    f"{args.answer_timeout:g} s{since}")
        finally:
            await end(session)


def sample(pid):
    with open(f"/proc/{pid}/status") as status:
        rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    return rss, fds


class NodeDied(Exception):
    pass


def take_sample(env, started, stats, load):
    """One CSV row: single-daemon columns as before; a cluster has per-node columns."""
    now = time.monotonic()
    row = {"elapsed_s": round(now - started), "load": int(load),
           "joins": stats.counts.get("joins", 0), "calls": stats.counts.get("calls", 0),
           "pushes": stats.counts.get("pushes", 0)}
    if not env.cluster:
        node = env.nodes[0]
        if node.process.poll() is not None:
            raise NodeDied(f"roomd exited during the run ({exit_status(node.process.returncode)}, "
                           f"log {env.log_path(node)}, working directory {node.cwd})")
        row["rss_kib"], row["fds"] = sample(node.process.pid)
        row["settled"] = 1
        return row
    for node in env.nodes:
        process, run, measured = node.process, node.run, None
        if node.up:
            try:
                measured = sample(process.pid)
            except (FileNotFoundError, ProcessLookupError, StopIteration):
                pass  # gone (or a zombie) since: killed by us just now, or died (below)
            if process.poll() is not None and node.up and not node.draining and node.process is process:
                raise NodeDied(f"{node.name} exited without being killed ({exit_status(process.returncode)}, "
                               f"log {env.log_path(node)}, working directory {node.cwd})")
        if measured and node.up and node.run == run:
            row.update({f"{node.name}_rss_kib": measured[0], f"{node.name}_fds": measured[1], f"{node.name}_run": run})
            row.update({f"{node.name}_{key}": value for key, value in held(node).items()})
        else:
            row.update({f"{node.name}_{key}": "" for key in ("rss_kib", "fds", "run") + HELD})
    row["settled"] = int(all(n.up for n in env.nodes) and now >= env.settled_from)
    row["nats_rss_kib"] = sample(env.nats.pid)[0]
    row["js_messages"], row["js_bytes"] = env.jetstream()
    return row


# What a node holds, from its /metrics: the rooms it is home of, the encoded
# size of their saved state (KiB), the pushes held for peers in their grace (KiB).
HELD = ("rooms", "state_kib", "grace_kib")
HELD_SERIES = {"roomd_rooms": ("rooms", 1), "roomd_cluster_room_state_bytes": ("state_kib", 1024),
               "roomd_resume_buffer_bytes": ("grace_kib", 1024)}


def held(node):
    """HELD of `node` ("" for what it cannot tell)."""
    found = dict.fromkeys(HELD, "")
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{node.port}/metrics", timeout=2) as response:
            for line in response.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name in HELD_SERIES:
                    key, unit = HELD_SERIES[name]
                    found[key] = int(float(value) / unit)
    except (OSError, ValueError):
        pass
    return found


def describe(env, row):
    counters = f"joins {row['joins']}  calls {row['calls']}  pushes {row['pushes']}"
    if not env.cluster:
        return f"soak: {row['elapsed_s']:5d}s  rss {row['rss_kib'] / 1024:7.1f} MiB  fds {row['fds']:4d}  {counters}"
    nodes = "  ".join(f"{n.name} {row[n.name + '_rss_kib'] / 1024:5.1f} MiB {row[n.name + '_fds']:3d} fds"
                      if row[n.name + "_rss_kib"] != "" else f"{n.name} down" for n in env.nodes)
    return f"soak: {row['elapsed_s']:5d}s  {nodes}  {counters}"


async def sampler(env, started, deadline, stats, rows, writer, file):
    while True:
        row = await asyncio.to_thread(take_sample, env, started, stats, time.monotonic() < deadline)
        rows.append(row)
        writer.writerow(row)
        file.flush()
        print(describe(env, row), flush=True)
        if time.monotonic() >= deadline:
            return
        await asyncio.sleep(min(10.0, max(0.0, deadline - time.monotonic())))


def schedule(env, started, deadline):
    """The kills (every --kill-every s) and drains (every --drain-every s, the
    first half a period in, so that they alternate with kills of the same
    period), in time order, each far enough from the deadline to be over by it."""
    args = env.args
    events = []
    for kind, every, first, victims in (("kill", args.kill_every, args.kill_every, env.nodes[args.steady:]),
                                        ("drain", args.drain_every, args.drain_every / 2,
                                         env.nodes[args.drain_steady:])):
        if every <= 0 or not victims:
            continue
        at = started + first
        while at + args.down_range[1] + args.drain_wait + args.rejoin_timeout < deadline:
            events.append((at, kind, victims))
            at += every
    return sorted(events, key=lambda e: e[0])


async def disruptor(env, started, deadline, rng, stats):
    """Kills and drains, one at a time: an event due while the last one is
    still going on (a node restarting) starts when it is over."""
    for at, kind, victims in schedule(env, started, deadline):
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        node = rng.choice(victims)
        if node.restarts and node.joins == 0:
            env.failed.append(f"{node.name}'s run {node.run} served no join")
        last = await asyncio.to_thread(sample, node.process.pid)
        node.runs.append((node.run, node.process.pid) + last + (node.joins,))
        ok = await (kill(env, started, node, rng) if kind == "kill" else drain(env, started, node))
        if not ok:
            return
        await check_messages(env, stats, f"after the {kind} of {node.name} at {env.kills[-1]['at'] if kind == 'kill' else env.drains[-1]['at']} s")


async def restart(env, node, event):
    """Starts `node` again and waits until every node counts it; False when it does not start."""
    if not await asyncio.to_thread(env.restart, node):
        env.failed.append(f"{node.name} could not be started again (log {env.log_path(node)})")
        event["rejoined"] = None
        print(f"soak: {event['at']:5d}s  {event['kind']} {node.name}: it did not start again", flush=True)
        return False
    node.restarts += 1
    event["rejoined"] = await asyncio.to_thread(env.wait_for_cluster, env.args.rejoin_timeout)
    if event["rejoined"] is None:
        counts = {n.name: node_counts(env, n) for n in env.nodes}
        env.failed.append(f"{node.name} restarted after the {event['kind']} at {event['at']} s was not counted by "
                          f"every node within {env.args.rejoin_timeout:g} s (nodes seen: {counts})")
    return True


def rejoined(env, event):
    return f"nodes: {len(env.nodes)} on every node {event['rejoined']:.1f} s later" \
        if event["rejoined"] is not None else "NOT counted by every node"


async def kill(env, started, node, rng):
    """SIGKILL `node`, wait a random --down-seconds, restart it with the same
    --node-id and port, and wait until every node counts it again."""
    low, high = env.args.down_range
    node.up = False  # before the signal: a client that sees its connection go knows why
    node.killed_runs.add(node.run)
    env.expect_5003_until = float("inf")
    env.settled_from = float("inf")  # until it is counted again (below)
    event = {"kind": "kill", "node": node.name, "at": round(time.monotonic() - started), "mono": time.monotonic(),
             "wall_ms": time.time() * 1000, "pid": node.process.pid}
    os.kill(node.process.pid, signal.SIGKILL)
    await asyncio.to_thread(node.process.wait)
    env.kills.append(event)
    event["down"] = rng.uniform(low, high)
    await asyncio.sleep(event["down"])
    if not await restart(env, node, event):
        return False
    now = time.monotonic()
    env.expect_5003_until = now + TAKEOVER_S
    env.settled_from = now + SETTLE_S
    print(f"soak: {event['at']:5d}s  kill -9 {node.name} (pid {event['pid']}), down {event['down']:.1f} s, "
          f"restarted as pid {node.process.pid} on port {node.port}: {rejoined(env, event)}", flush=True)
    return True


async def drain(env, started, node):
    """SIGTERM `node` (a planned restart: it hands its rooms over and closes
    its clients with 1012), wait for its exit (status 0 within --drain-wait),
    start it again at once and wait until every node counts it. 5003 is not
    expected around a drain."""
    node.draining = True
    node.drained_runs.add(node.run)
    env.settled_from = float("inf")
    event = {"kind": "drain", "node": node.name, "at": round(time.monotonic() - started), "mono": time.monotonic(),
             "pid": node.process.pid}
    env.drains.append(event)
    os.kill(node.process.pid, signal.SIGTERM)
    try:
        status = await asyncio.to_thread(node.process.wait, env.args.drain_wait)
    except subprocess.TimeoutExpired:
        node.process.kill()
        status = await asyncio.to_thread(node.process.wait)
        env.failed.append(f"{node.name} did not exit within {env.args.drain_wait:g} s of its drain at {event['at']} s")
    event["took"] = time.monotonic() - event["mono"]
    event["status"] = status
    node.up = False
    node.draining = False
    if status != 0:
        env.failed.append(f"{node.name} drained at {event['at']} s ended with {exit_status(status)} "
                          f"(log {env.log_path(node)})")
    if not await restart(env, node, event):
        return False
    env.settled_from = time.monotonic() + SETTLE_S
    print(f"soak: {event['at']:5d}s  drain {node.name} (pid {event['pid']}): {exit_status(status)} after "
          f"{event['took']:.1f} s, restarted as pid {node.process.pid} on port {node.port}: {rejoined(env, event)}",
          flush=True)
    return True


async def history(session):
    """The room's whole history ring (chat-history pages, newest first, until
    HISTORY_SIZE messages or no more): [(message_id, timestamp)]."""
    messages, before = [], None
    while len(messages) < HISTORY_SIZE:
        answer = await session.call("chat-history", {"limit": 200, **({"before": before} if before else {})})
        if "result" not in answer:
            raise RuntimeError(f"chat-history answered {answer.get('error')}")
        page = answer["result"].get("messages") or []
        messages = [(m["message_id"], m.get("timestamp") or 0) for m in page] + messages
        if not answer["result"].get("more") or not page:
            break
        before = page[0]["message_id"]
    return messages


async def check_messages(env, stats, label):
    """No answered message lost: a checker joins every room (viewer) on a live
    node and reads its history; every message answered in that room session
    before the read must be in it (those older than the oldest one kept when
    the ring is full excepted). One answered less than SAVE_WINDOW_S before a
    kill -9 may be lost (its home's last save came before it): counted apart."""
    checked = lost = lost_kill = 0
    problems = []
    env.check_count = getattr(env, "check_count", 0) + 1
    for r in range(env.args.rooms):
        room = f"soak-{r}"
        live = [n for n in env.nodes if n.up and not n.draining]
        session = await open_session(env, stats, live)
        if session is None:
            problems.append(f"{room}: no node took the checker's connection")
            continue
        try:
            user = f"checker-{env.check_count}-{r}"
            answer = await join(session, {"token": app_token(env.secret, room, user, "viewer")})
            if "result" not in answer:
                problems.append(f"{room}: the checker's join answered {answer.get('error')}")
                continue
            session.joined(answer, room, user)
            read_at = time.monotonic()
            kept = await history(session)
            await session.call("leave", {"reason": "check"})
        except (ConnectionClosed, ConnectionError, RuntimeError, Unanswered) as error:
            problems.append(f"{room}: the check failed ({error!r})")
            continue
        finally:
            await end(session)
        ids = {m for m, _ in kept}
        oldest = min((t for _, t in kept), default=0) if len(kept) >= HISTORY_SIZE else None
        for message_id, timestamp, answered in env.ledger.get((room, session.session_id), []):
            if answered >= read_at or (oldest is not None and timestamp <= oldest):
                continue
            checked += 1
            if message_id in ids:
                env.kept_ids.add(message_id)
                continue
            # By the message's own timestamp (its home's clock, this machine's):
            # an answer that reached this client only after the kill signal was
            # still given before it.
            if any(0 <= k["wall_ms"] - timestamp < SAVE_WINDOW_S * 1000 for k in env.kills):
                lost_kill += 1
                env.lost_kill_ids.add(message_id)
            else:
                lost += 1
                env.lost_ids.add(message_id)
                if len(problems) < 10:
                    nearest = min(env.kills, key=lambda k: abs(k["wall_ms"] - timestamp), default=None)
                    near = (f", timestamped {(nearest['wall_ms'] - timestamp) / 1000:+.2f} s before the kill of "
                            f"{nearest['node']} at {nearest['at']} s" if nearest else "")
                    problems.append(f"{room}: message {message_id} (session {session.session_id}) answered "
                                    f"{read_at - answered:.1f} s before the read{near} is not in the history")
    env.checks.append({"label": label, "checked": checked, "lost": lost, "lost_kill": lost_kill})
    stats.add("message checks")
    if lost:
        stats.add("messages lost", lost)
    if lost_kill:
        stats.add("messages lost in a kill's save window", lost_kill)
    for problem in problems:
        stats.unexpected.append(f"message check {label}: {problem}")
    print(f"soak: message check {label}: {checked} answered messages checked, {lost} lost"
          + (f", {lost_kill} in the save window before a kill -9" if lost_kill else "")
          + (f"; {len(problems)} problem(s)" if problems else ""), flush=True)


JUDGED_SPAN_S = 600  # growth is judged over 10 minutes at least


def base_for(env, node, rows, base, tail, warmup):
    """The samples to judge `node`'s growth by, (first, last 3): in a cluster,
    the first settled one after the warm-up in which it was home of as many
    rooms as at the end, and the end. Rooms do not move back to a node: over
    a run with drains the node that is never restarted becomes home of more
    of them, and its RSS grows with what it holds; compared at the same
    homes, growth is a leak. When it reached its last count of homes too late
    (less than JUDGED_SPAN_S before the end), the longest stretch of settled
    samples after the warm-up at one count of homes, if it spans
    JUDGED_SPAN_S: its first sample and its last 3. Else `base` and the end
    (and says so)."""
    if not env.cluster:
        return base, tail
    column = f"{node.name}_rooms"
    homes = [r.get(column) for r in tail if r.get(column) not in ("", None)]
    if not homes:
        return base, tail
    end = int(statistics.median(homes))
    latest = tail[0]["elapsed_s"] - JUDGED_SPAN_S  # a base this far from the end at least
    same = next((r for r in rows if warmup <= r["elapsed_s"] <= latest and r["settled"] and r.get(column) == end),
                None)
    at_base = base.get(column)
    if same is not None:
        if same is not base:
            print(f"soak: {node.name} was home of {at_base} room(s) at {base['elapsed_s']} s and of {end} at the end: "
                  f"judged from {same['elapsed_s']} s, the first settled sample with {end}")
        return same, tail
    stretches, current = [], []
    for r in rows:
        if r["elapsed_s"] < warmup or not r["settled"] or not r["load"] or r.get(column) in ("", None):
            continue
        if current and current[-1].get(column) != r.get(column):
            stretches.append(current)
            current = []
        current.append(r)
    if current:
        stretches.append(current)
    longest = max(stretches, key=lambda st: st[-1]["elapsed_s"] - st[0]["elapsed_s"], default=[])
    if len(longest) >= 4 and longest[-1]["elapsed_s"] - longest[0]["elapsed_s"] >= JUDGED_SPAN_S:
        print(f"soak: {node.name} was home of {end} room(s) only from less than {JUDGED_SPAN_S} s before the end: "
              f"judged over its longest stretch at equal homes after the warm-up, {longest[0][column]} room(s) from "
              f"{longest[0]['elapsed_s']} to {longest[-1]['elapsed_s']} s")
        return longest[0], longest[-3:]
    print(f"soak: {node.name} was home of {end} room(s) at the end and of {at_base} at {base['elapsed_s']} s, "
          f"never of {end} between the warm-up and {JUDGED_SPAN_S} s before the end, and no stretch at equal homes "
          f"spans {JUDGED_SPAN_S} s: judged from {base['elapsed_s']} s anyway")
    return base, tail


def judge(env, args, rows, after, warmup):
    """The 10 % rule on the nodes that stayed up, from the first settled sample after the warm-up."""
    judged = [n for n in env.nodes if n.restarts == 0]
    base = next((r for r in rows if r["elapsed_s"] >= warmup and r["settled"]), None)
    loaded = [r for r in rows if r["load"] and r["settled"]]
    if base is None or len(loaded) < 3 or base is loaded[-1]:
        env.failed.append(f"too few {'settled ' if env.cluster else ''}samples after the warm-up to judge growth")
        return
    tail = loaded[-3:]
    for node in judged:
        node_base, node_tail = base_for(env, node, rows, base, tail, warmup)
        for key in ("rss_kib", "fds"):
            column = key if not env.cluster else f"{node.name}_{key}"
            start, at_base, end = rows[0][column], node_base[column], statistics.median(r[column] for r in node_tail)
            growth = (end - at_base) / at_base
            name = key if not env.cluster else f"{node.name} {key}"
            print(f"soak: {name}: start {start}, at {node_base['elapsed_s']} s {at_base}, at "
                  f"{node_tail[-1]['elapsed_s']} s (median of last 3 under load) {end:g}, growth {growth * 100:+.1f} %" + (f", after the load {after[column]}" if after else ""))
            if growth > args.max_growth:
                env.failed.append(f"{name} grew {growth * 100:.1f} % after the warm-up (limit {args.max_growth * 100:g} %)")
        if env.cluster:
            # What it held then and at the end, to set the RSS against (not judged).
            parts = []
            for key in HELD[1:]:
                column = f"{node.name}_{key}"
                ends = [r[column] for r in node_tail if r.get(column) not in ("", None)]
                if node_base.get(column) not in ("", None) and ends:
                    parts.append(f"{key} {node_base[column]} -> {statistics.median(ends):g}")
            if parts:
                print(f"soak: {node.name} held at {node_base['elapsed_s']} s and at the end: {', '.join(parts)}")
    for node in env.nodes:
        if node.restarts:
            runs = ", ".join(f"run {run} (pid {pid}) {rss / 1024:.1f} MiB {fds} fds, {joins} joins"
                             for run, pid, rss, fds, joins in node.runs)
            last = [r for r in rows if r.get(f"{node.name}_rss_kib") not in ("", None)][-1:]
            now = f"; run {node.run} at the end {last[0][node.name + '_rss_kib'] / 1024:.1f} MiB " \
                  f"{last[0][node.name + '_fds']} fds, {node.joins} joins" if last else ""
            print(f"soak: {node.name} (restarted {node.restarts}x, not judged) before each kill or drain: {runs}{now}")
            if node.joins == 0:
                env.failed.append(f"{node.name}'s last run served no join")


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
    parser.add_argument("--csv", default=None, help="default .build-soak/soak.csv (soak-cluster.csv with --cluster)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-level", default="warning", help="roomd's --log-level (default warning)")
    parser.add_argument("--no-cores", dest="cores", action="store_false",
                        help="do not raise the core-file limit of the daemons (a crash dumps core in the run's "
                             "directory when /proc/sys/kernel/core_pattern is a file name)")
    parser.add_argument("--answer-timeout", type=float, default=None,
                        help="a call unanswered this long fails the run (default 10 s; 30 s with --cluster)")
    cluster = parser.add_argument_group("cluster")
    cluster.add_argument("--cluster", type=int, default=0, metavar="N",
                         help="run N roomd nodes on a nats-server instead of one daemon (N >= 2)")
    cluster.add_argument("--kill-every", type=float, default=180, metavar="S",
                         help="kill -9 a node every S seconds and restart it (0: never; default 180)")
    cluster.add_argument("--drain-every", type=float, default=0, metavar="S",
                         help="drain a node every S seconds (SIGTERM, exit 0, restart; 0: never, the default); "
                              "the first drain comes at S/2, so drains alternate with kills of the same period")
    cluster.add_argument("--drain-steady", type=int, default=1, metavar="K",
                         help="nodes 1..K are never drained (default 1: node1 stays up, judged for growth)")
    cluster.add_argument("--drain-wait", type=float, default=30,
                         help="a drained node must exit within this (default 30 s; roomd's --drain-timeout is 10)")
    cluster.add_argument("--down-seconds", default="1-8", metavar="MIN-MAX",
                         help="a killed node stays down a random time in this range (default 1-8)")
    cluster.add_argument("--steady", type=int, default=None, metavar="K",
                         help="nodes 1..K are never killed (default N-1: only the last node is)")
    cluster.add_argument("--rejoin-timeout", type=float, default=30,
                         help="a restarted node must be counted by every node within this (default 30 s)")
    args = parser.parse_args()
    args.binary, args.config = os.path.abspath(args.binary), os.path.abspath(args.config)  # roomd runs elsewhere
    if not 0 < args.minutes <= 24 * 60:
        sys.exit("soak: --minutes must be in (0, 1440]")
    if args.cluster == 1 or args.cluster < 0:
        sys.exit("soak: --cluster takes 2 nodes or more")
    if args.csv is None:
        args.csv = ".build-soak/soak-cluster.csv" if args.cluster else ".build-soak/soak.csv"
    if args.answer_timeout is None:
        args.answer_timeout = 30 if args.cluster else 10
    try:
        low, high = (float(x) for x in args.down_seconds.split("-"))
        assert 0 <= low <= high
        args.down_range = (low, high)
    except (ValueError, AssertionError):
        sys.exit("soak: --down-seconds takes MIN-MAX, e.g. 1-8")
    if args.steady is None:
        args.steady = max(args.cluster - 1, 0)
    if args.cluster and not 0 <= args.steady <= args.cluster:
        sys.exit("soak: --steady must be in 0..N")
    if args.cluster and not 0 <= args.drain_steady <= args.cluster:
        sys.exit("soak: --drain-steady must be in 0..N")
    warmup = min(900, args.minutes * 30)  # half the run, at most 15 minutes

    directory = tempfile.mkdtemp(prefix="roomd-soak-")
    env = Env(args, directory)
    env.start()
    stats = Stats()
    if env.cluster:
        kills = (f"kill -9 of {', '.join(n.name for n in env.nodes[args.steady:]) or 'no node'} every "
                 f"{args.kill_every:g} s, down {args.down_seconds} s" if args.kill_every > 0 else "no kills")
        kills += (f"; drain of {', '.join(n.name for n in env.nodes[args.drain_steady:]) or 'no node'} every "
                  f"{args.drain_every:g} s" if args.drain_every > 0 else "; no drains")
        print(f"soak: nats-server pid {env.nats.pid} on nats://127.0.0.1:{env.nats_port} (JetStream store in "
              f"{directory}/nats-store); " + ", ".join(f"{n.name} pid {n.process.pid} on {n.url}" for n in env.nodes),
              flush=True)
        print(f"soak: {args.workers} workers over {args.rooms} rooms for {args.minutes:g} min; {kills}; warm-up "
              f"{warmup:g} s; calls answered within {args.answer_timeout:g} s; logs in {directory}; samples {args.csv}",
              flush=True)
    else:
        print(f"soak: roomd pid {env.nodes[0].process.pid} on {env.nodes[0].url}, {args.workers} workers over "
              f"{args.rooms} rooms for {args.minutes:g} min; warm-up {warmup:g} s; log {directory}/roomd.log; "
              f"samples {args.csv}", flush=True)
    os.makedirs(os.path.dirname(args.csv) or ".", exist_ok=True)
    rows = []
    after = None
    started = env.started = time.monotonic()
    deadline = started + args.minutes * 60
    if env.cluster:
        fields = ["elapsed_s", "load", "settled"] \
                 + [f"{n.name}_{k}" for n in env.nodes for k in ("rss_kib", "fds", "run") + HELD] \
                 + ["nats_rss_kib", "js_messages", "js_bytes", "joins", "calls", "pushes"]
    else:
        fields = ["elapsed_s", "rss_kib", "fds", "load", "joins", "calls", "pushes"]
    rng = random.Random(args.seed)
    tasks = []
    js_messages = js_bytes = nats_rss = None
    with open(args.csv, "w", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=fields, extrasaction="ignore")
        writer.writeheader()
        try:
            workers = [asyncio.create_task(worker(i, env, deadline, stats)) for i in range(args.workers)]
            tasks = list(workers)
            if env.cluster and (args.kill_every > 0 or args.drain_every > 0):
                tasks.append(asyncio.create_task(disruptor(env, started, deadline, rng, stats)))
            await sampler(env, started, deadline, stats, rows, writer, file)
            try:
                await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 60)
            except TimeoutError:
                env.failed.append("the clients did not finish within 60 s of the deadline")
            if env.cluster:
                await check_messages(env, stats, "at the end")
            await asyncio.sleep(5)
            after = await asyncio.to_thread(take_sample, env, started, stats, False)
            writer.writerow(after)
        except NodeDied as died:
            env.failed.append(str(died))
        except (FileNotFoundError, ProcessLookupError, StopIteration):
            env.failed.append("roomd died during the run")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if env.cluster and env.nats.poll() is None:
                js_messages, js_bytes = env.jetstream()
                nats_rss = sample(env.nats.pid)[0]
            await asyncio.to_thread(env.stop)

    print("soak: counts " + ", ".join(f"{k} {v}" for k, v in sorted(stats.counts.items())))
    print(f"soak: slowest answer {stats.slowest:.2f} s (limit {args.answer_timeout:g} s)")
    if env.cluster:
        for kill in env.kills:
            rejoined = f"counted by every node {kill['rejoined']:.1f} s after its restart" if kill.get("rejoined") is not None \
                else "not counted by every node"
            print(f"soak: kill -9 {kill['node']} at {kill['at']} s, down {kill.get('down', 0):.1f} s, {rejoined}")
        for drained in env.drains:
            rejoined = f"counted by every node {drained['rejoined']:.1f} s after its restart" \
                if drained.get("rejoined") is not None else "not counted by every node"
            print(f"soak: drain {drained['node']} at {drained['at']} s: "
                  f"{exit_status(drained['status']) if 'status' in drained else 'no exit'} after "
                  f"{drained.get('took', 0):.1f} s, {rejoined}")
        lost, lost_kill = len(env.lost_ids), len(env.lost_kill_ids)
        print(f"soak: messages: {stats.counts.get('messages answered', 0)} answered to everyone, "
              f"{len(env.checks)} checks of every room's history, {len(env.kept_ids)} distinct answered messages "
              f"found, {lost} lost, {lost_kill} lost in a kill's save window")
        if env.unexpected_5003_at:
            print("soak: 5003 not around a kill, at (s: count): "
                  + ", ".join(f"{at}: {n}" for at, n in sorted(env.unexpected_5003_at.items())))
        for close in env.closes[:20]:
            print(f"soak: close: {close}")
        if len(env.closes) > 20:
            print(f"soak: … {len(env.closes) - 20} more closes")
        if lost:
            env.failed.append(f"{lost} answered message(s) lost")
        if nats_rss is not None:
            print(f"soak: nats-server at the end: rss {nats_rss / 1024:.1f} MiB, JetStream {js_messages} messages, "
                  f"{js_bytes} bytes")
    judge(env, args, rows, after, warmup)
    for problem in stats.unanswered[:10]:
        print(f"soak: unanswered: {problem}")
    if len(stats.unanswered) > 10:
        print(f"soak: … {len(stats.unanswered) - 10} more unanswered")
    if stats.unanswered:
        env.failed.append(f"{len(stats.unanswered)} call(s) unanswered within {args.answer_timeout:g} s")
    for problem in stats.unexpected[:10]:
        print(f"soak: unexpected: {problem}")
    if len(stats.unexpected) > 10:
        print(f"soak: … {len(stats.unexpected) - 10} more unexpected")
    if stats.unexpected:
        env.failed.append(f"{len(stats.unexpected)} unexpected protocol outcome(s)")
    if env.cluster:
        shutil.rmtree(os.path.join(directory, "nats-store"), ignore_errors=True)
    if env.failed:
        print("soak: FAILED: " + "; ".join(env.failed))
        return 1
    print("soak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
