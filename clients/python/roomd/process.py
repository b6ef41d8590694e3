"""Starts a real roomd on a free port for a test, and stops it."""
from __future__ import annotations

import atexit
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, List, Optional, Sequence, Union

from .token import TokenMinter

__all__ = ["RoomdProcess", "find_roomd", "find_config"]

# clients/python/roomd/process.py -> the repository root (for an editable install or a checkout).
_REPO = Path(__file__).resolve().parents[3]
_LISTENING = "roomd listening on "


def find_roomd(binary: Union[str, os.PathLike, None] = None) -> str:
    """The roomd binary: ``binary`` if given, else ``$ROOMD_BIN``, else the
    repository's ``.build/debug/roomd`` (next to this package, then under the
    current directory), else ``roomd`` on ``PATH``."""
    if binary:
        return str(binary)
    if os.environ.get("ROOMD_BIN"):
        return os.environ["ROOMD_BIN"]
    for root in (_REPO, Path.cwd()):
        candidate = root / ".build" / "debug" / "roomd"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("roomd")
    if found:
        return found
    raise FileNotFoundError("roomd binary not found: set ROOMD_BIN=/path/to/roomd, put roomd on PATH "
                            "(make install), or run `swift build` in the roomd checkout")


#: The default template inside the package: a copy of the repository's config/roles.json
#: (host, guest, moderator, viewer), so an installed wheel needs no checkout.
PACKAGED_CONFIG = Path(__file__).resolve().parent / "roles.json"


def find_config(config: Union[str, os.PathLike, None] = None) -> str:
    """The role template: ``config`` if given, else ``$ROOMD_CONFIG``, else the checkout's
    ``config/roles.json`` (next to this package, then under the current directory), else the
    copy inside the package (:data:`PACKAGED_CONFIG`)."""
    if config:
        return str(config)
    if os.environ.get("ROOMD_CONFIG"):
        path = os.environ["ROOMD_CONFIG"]
        if not os.path.isfile(path):
            raise FileNotFoundError(f"ROOMD_CONFIG={path}: no such file")
        return path
    for root in (_REPO, Path.cwd()):
        candidate = root / "config" / "roles.json"
        if candidate.is_file():
            return str(candidate)
    return str(PACKAGED_CONFIG)


class RoomdProcess:
    """A roomd daemon on a free loopback port with a fresh temporary secret.

    >>> with RoomdProcess() as roomd:
    ...     token = roomd.token(room="show", user="host-1", role="host")
    ...     print(roomd.url)       # ws://127.0.0.1:PORT/ws

    ``stop()`` (and leaving the ``with`` block, and the interpreter exiting)
    sends SIGTERM and waits for the process; if this process is killed
    outright, roomd still exits (``--exit-with-stdin``: its stdin pipe
    closes). ``stderr`` holds its log.
    """

    def __init__(self, binary: Union[str, os.PathLike, None] = None, config: Union[str, os.PathLike, None] = None,
                 args: Sequence[str] = (), secret: Union[str, bytes, None] = None, start_timeout: float = 10.0,
                 test_mode: bool = False, clock: Optional[str] = None, clock_start: Optional[int] = None,
                 seed: Optional[int] = None, webhooks: Any = None, settings: Optional[dict] = None,
                 hooks: Any = None):
        """``clock="manual"`` (implies ``test_mode``): roomd's clock starts at ``clock_start`` (ms since
        the epoch; default: now) and moves only by :meth:`advance`; ``seed``: every server id is drawn
        from one stream seeded with it (implies ``test_mode``). See PROTOCOL.md section 25.
        ``webhooks``: a URL, or a :class:`roomd.webhooks.WebhookSink` (which then gets the secret):
        the daemon serves a copy of the template with ``settings.webhooks.url`` set to it.
        ``hooks``: a URL, or a :class:`roomd.hooks.HookServer` (which then gets the secret): the
        template's ``settings.hooks.url`` is set to it (section 30; other ``hooks`` fields through
        ``settings``).
        ``settings``: sections merged into the template's ``settings`` (one level deep:
        ``{"chat": {"hold": {"links": True}}}`` replaces ``settings.chat.hold``, keeps the rest of chat)."""
        self.binary = find_roomd(binary)
        self.config = find_config(config)
        self.args: List[str] = list(args)
        self.manual_clock = clock == "manual"
        if test_mode or clock == "manual" or seed is not None:
            self.args = ["--test-mode"] + self.args
        if clock is not None:
            self.args += ["--clock", clock]
        if clock_start is not None:
            self.args += ["--clock-start", str(clock_start)]
        if seed is not None:
            self.args += ["--seed", str(seed)]
        if secret is None:
            secret = secrets.token_urlsafe(48)  # 64 characters, roomd wants >= 32 bytes
        self.secret: bytes = secret.encode() if isinstance(secret, str) else bytes(secret)
        self.minter = TokenMinter(self.secret)
        self.webhooks_url: Optional[str] = getattr(webhooks, "url", webhooks)
        self.settings = settings or {}
        if webhooks is not None and hasattr(webhooks, "secret"):
            webhooks.secret = self.secret
        self.hooks_url: Optional[str] = getattr(hooks, "url", hooks)
        if hooks is not None and hasattr(hooks, "secret"):
            hooks.secret = self.secret
        self.start_timeout = start_timeout
        self.url = ""
        self.http_url = ""
        self.host = ""
        self.port = 0
        self._dir: Optional[str] = None
        self._stderr_file = None
        self.process: Optional[subprocess.Popen] = None

    # -- lifecycle --------------------------------------------------------

    def start(self) -> "RoomdProcess":
        self._dir = tempfile.mkdtemp(prefix="roomd-test-")
        secret_file = os.path.join(self._dir, "secret")
        fd = os.open(secret_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.secret)
        self._stderr_file = open(os.path.join(self._dir, "stderr.log"), "w+b")
        if self.webhooks_url or self.hooks_url or self.settings:
            with open(self.config, encoding="utf-8") as f:
                template = json.load(f)
            for section, values in self.settings.items():
                template.setdefault("settings", {}).setdefault(section, {}).update(values)
            if self.webhooks_url:
                template.setdefault("settings", {}).setdefault("webhooks", {})["url"] = self.webhooks_url
            if self.hooks_url:
                template.setdefault("settings", {}).setdefault("hooks", {})["url"] = self.hooks_url
            self.config = os.path.join(self._dir, "roles.json")
            with open(self.config, "w", encoding="utf-8") as f:
                json.dump(template, f)
        # --exit-with-stdin: roomd also goes when this process dies without stop() (the pipe closes).
        command = [self.binary, "--config", self.config, "--host", "127.0.0.1", "--port", "0",
                   "--secret-file", secret_file, "--exit-with-stdin", *self.args]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=self._stderr_file)
        atexit.register(self.stop)
        line = self._read_line()
        if not line.startswith(_LISTENING):
            self.stop()
            raise RuntimeError(f"roomd did not start ({' '.join(command)}): stdout {line!r}\n{self.stderr}")
        self.url = line[len(_LISTENING):].strip()
        authority = self.url.split("://", 1)[1].split("/", 1)[0]
        self.host, port = authority.rsplit(":", 1)
        self.port = int(port)
        self.http_url = f"http://{authority}"
        return self

    def _read_line(self) -> str:
        assert self.process is not None and self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = time.monotonic() + self.start_timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                return data.decode(errors="replace") or "(nothing within %.0f s)" % self.start_timeout
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 4096)
                if not chunk:  # exited before listening
                    self.process.wait(5)
                    return data.decode(errors="replace") + f"(exited with {self.process.returncode})"
                data += chunk
        return data.split(b"\n", 1)[0].decode()

    def stop(self, timeout: float = 10.0) -> Optional[int]:
        """SIGTERM, wait (SIGKILL after ``timeout``); returns the exit status."""
        process = self.process
        if process is None:
            return None
        atexit.unregister(self.stop)
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for pipe in (process.stdin, process.stdout):
            if pipe:
                pipe.close()
        if self._dir:
            self._stderr_text = self.stderr
            if self._stderr_file:
                self._stderr_file.close()
                self._stderr_file = None
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None
        return process.returncode

    def __enter__(self) -> "RoomdProcess":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def stderr(self) -> str:
        """Everything roomd wrote to stderr so far (its log)."""
        if self._stderr_file is None:
            return getattr(self, "_stderr_text", "")
        self._stderr_file.flush()
        with open(self._stderr_file.name, "rb") as f:
            return f.read().decode(errors="replace")

    # -- conveniences -----------------------------------------------------

    def token(self, room: str, user: str, role: str, **claims: object) -> str:
        """An app token signed with this daemon's secret (see ``TokenMinter.app_token``)."""
        return self.minter.app_token(room, user, role, **claims)  # type: ignore[arg-type]

    def management_token(self, **kwargs: object) -> str:
        return self.minter.management_token(**kwargs)  # type: ignore[arg-type]

    def feed(self, room: str, token: Optional[str] = None, interval: int = 3):
        """A :class:`~roomd.FeedReader` of ``room``'s audience feed on this daemon (a management
        token unless ``token``). On the manual clock it reads the daemon's clock and its sleep
        moves that clock: a reader's 3-s loop runs in no time."""
        from .feed import FeedReader
        token = token or self.management_token()
        if self.manual_clock:
            async def advance(seconds: float) -> None:
                self.advance(seconds)
            return FeedReader(self.http_url, room, token, interval, clock=lambda: self.clock() / 1000,
                              sleep=advance)
        return FeedReader(self.http_url, room, token, interval)

    # -- test mode (clock="manual") -----------------------------------------

    def advance(self, seconds: float) -> int:
        """Moves the manual clock by ``seconds``: every timer it passes (graces, request expiries,
        poll durations, join deadlines, the coalesced pushes) runs in time order before this returns.
        Returns the clock's time in ms since the epoch."""
        return self._test_route("POST", "clock", {"advance_ms": round(seconds * 1000)})

    def set_clock(self, ms: int) -> int:
        """Sets the manual clock to ``ms`` (ms since the epoch, not before its time now)."""
        return self._test_route("POST", "clock", {"set_ms": ms})

    def clock(self) -> int:
        """The manual clock's time in ms since the epoch."""
        return self._test_route("GET", "clock", None)

    def fault(self, action: str, peer_id: Optional[str] = None, user_id: Optional[str] = None,
              **params: object) -> List[str]:
        """Injects a fault into the connections of ``peer_id`` (or every peer of ``user_id``):
        ``"close"`` (``code=1006``: dropped without a close frame), ``"stall"`` (``ms``: roomd neither
        reads nor writes the socket; past the outbound limit it is a 4008 slow consumer), ``"delay"``
        (``ms``: pushes held, then delivered in order), ``"drop"`` (``count``: pushes discarded).
        Timed faults end on the daemon's clock. Returns the peer ids it reached."""
        body = {"action": action, **params}
        if peer_id is not None:
            body["peer_id"] = peer_id
        if user_id is not None:
            body["user_id"] = user_id
        return self._test_route("POST", "faults", body, "peers")

    def fail_next(self, method: str, code: int, message: Optional[str] = None, count: int = 1,
                  peer_id: Optional[str] = None) -> None:
        """The next ``count`` calls of ``method`` (by ``peer_id``, or by anyone) are answered with
        error ``code`` (``message``, else roomd's "a scripted error") and change nothing: an app's
        error path without contriving the state (PROTOCOL.md section 33).
        ``roomd.fail_next("role-change", 40900)``."""
        error: dict = {"code": code}
        if message is not None:
            error["message"] = message
        body: dict = {"method": method, "error": error, "count": count}
        if peer_id is not None:
            body["peer_id"] = peer_id
        self._test_route("POST", "faults", body, "left")

    def drop_next(self, push: str, count: int = 1, peer_id: Optional[str] = None) -> None:
        """The next ``count`` pushes named ``push`` are dropped: ``peer_id``'s, or (without it) the
        next such pushes as sent, for every recipient (PROTOCOL.md section 33).
        ``roomd.drop_next("on-peer-update")``: nobody sees the next peer update."""
        self._push_fault(push, "drop", count, peer_id, None)

    def delay_next(self, push: str, seconds: float, count: int = 1, peer_id: Optional[str] = None) -> None:
        """The next ``count`` pushes named ``push`` (``peer_id``'s, or every recipient's) are held for
        ``seconds`` on the daemon's clock, with every push behind them (order is kept)."""
        self._push_fault(push, "delay", count, peer_id, round(seconds * 1000))

    def _push_fault(self, push: str, action: str, count: int, peer_id: Optional[str], ms: Optional[int]) -> None:
        from .client import PUSHES, UnknownPush, close_pushes
        if push not in PUSHES:
            raise UnknownPush(push, close_pushes(push))
        body: dict = {"push": push, "action": action, "count": count}
        if ms is not None:
            body["ms"] = ms
        if peer_id is not None:
            body["peer_id"] = peer_id
        self._test_route("POST", "faults", body, "left")

    def add_audience(self, room: str, count: int, role: str = "viewer", seed: Optional[int] = None,
                     name_prefix: Optional[str] = None) -> dict:
        """``count`` socketless peers of ``role`` join ``room``: real peers (counted, found by
        ``find-peer``, announced) whose pushes are encoded and discarded (PROTOCOL.md section 33).
        Returns ``{"peer_ids": [first 1,000], "count": n}``."""
        body: dict = {"room_id": room, "count": count, "role": role}
        if seed is not None:
            body["seed"] = seed
        if name_prefix is not None:
            body["name_prefix"] = name_prefix
        return self._test_route("POST", "audience", body, None)

    def audience_act(self, room: str, action: str, count: int, params: Optional[dict] = None) -> dict:
        """``count`` of ``room``'s synthetic peers (chosen by its seed) call ``action`` (``react``,
        ``broadcast``, ``question-add``, ``question-vote``, ``poll-response``, ``stage-request``,
        ``group-join``, ``leave``) with ``params`` now. Returns ``{"done", "errors": {code: n},
        "messages": {code: first message}}``."""
        return self._test_route("POST", "audience/act",
                                {"room_id": room, "action": action, "count": count, "params": params or {}}, None)

    def remove_audience(self, room: str) -> int:
        """Every synthetic peer of ``room`` leaves; returns how many."""
        return self._test_route("DELETE", f"audience?room_id={urllib.parse.quote(room)}", None, "removed")

    def faults(self) -> List[dict]:
        """Every fault in force: the method faults, then the push faults, as posted
        with ``left``, then each connection's."""
        return self._test_route("GET", "faults", None, "faults")

    def fail_webhooks(self, next: int = 1, status: Union[int, str] = 500) -> None:
        """The next ``next`` webhook attempts fail with ``status`` (or ``"timeout"``) without
        reaching the receiver; roomd retries them as real failures."""
        self._test_route("POST", "faults", {"webhooks": {"fail_next": next, "status": status}}, "webhooks")

    def fail_hooks(self, next: int = 1, status: Union[int, str] = 500) -> None:
        """The next ``next`` hook calls (section 30) fail with ``status`` (or ``"timeout"``, after the
        hook's ``timeout_ms``) without reaching the hook; ``settings.hooks.on_error`` applies."""
        self._test_route("POST", "faults", {"hooks": {"fail_next": next, "status": status}}, "hooks")

    def journal(self, room: str) -> List[dict]:
        """The journal of ``room``'s latest session: one dict per event (``kind`` call, answer, push,
        webhook) in order; write it as JSON lines for ``roomd replay FILE --against URL``."""
        request = urllib.request.Request(
            f"{self.http_url}/v2/test/journal?room_id={urllib.parse.quote(room)}",
            headers={"Authorization": f"Bearer {self.management_token()}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return [json.loads(line) for line in response.read().splitlines() if line]
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"GET /v2/test/journal: {error.code} {error.read().decode(errors='replace')}")

    def clear_faults(self) -> None:
        """Ends every fault now."""
        self._test_route("DELETE", "faults", None, None)

    def _test_route(self, method: str, route: str, body: Optional[dict], key: Optional[str] = "now"):
        request = urllib.request.Request(
            f"{self.http_url}/v2/test/{route}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self.management_token()}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                answer = json.loads(response.read())
                return answer[key] if key else answer
        except urllib.error.HTTPError as error:
            raise RuntimeError(f"{method} /v2/test/{route}: {error.code} {error.read().decode(errors='replace')}")

    async def connect(self, timeout: float = 5.0):
        """A new :class:`~roomd.RoomClient` connected to this daemon."""
        from .client import RoomClient

        return await RoomClient.connect(self.url, timeout)

    async def join(self, room: str, user: str, role: str, name: Optional[str] = None, **claims: object):
        """Connects and joins in one step; returns the client (``client.peer_id`` is set)."""
        client = await self.connect()
        await client.join(self.token(room, user, role, name=name, **claims))
        return client
