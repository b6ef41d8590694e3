"""The app's hook as a test sets it (PROTOCOL.md section 30).

:class:`HookServer` is a hook on a free loopback port (the pytest fixture
``hook_server``, the Swift kit's ``HookServer``): it verifies each request's
signature as a real backend would (:func:`roomd.webhooks.verify`) and answers
it as the test says — the next answers queued with :meth:`HookServer.answer`,
else :attr:`HookServer.decide` (a function of the verified event), else
``default``::

    def test_the_guest_list(roomd_factory, hook_server):
        roomd = roomd_factory(hooks=hook_server)
        hook_server.answer(deny("not on the guest list"))
        async def scenario():
            with pytest.raises(RoomdError) as refused:
                await roomd.join("show", "eve", "viewer")
            assert refused.value.code == 40305
        asyncio.run(scenario())

Answers: :func:`allow`, :func:`deny`, :func:`rewrite` (``name``, ``role``,
``attributes`` for a join; ``info`` for a message; ``text`` for a question;
``note`` for a stage request), :func:`shadow`, :func:`status` (a failed hook),
:func:`body` (raw bytes: garbage), :func:`silence` (no answer: roomd's
``timeout_ms`` ends it), :func:`delayed`.
"""
from __future__ import annotations

import asyncio
import http.server
import json
import socketserver
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Union

from .webhooks import verify

__all__ = ["HookServer", "allow", "deny", "rewrite", "shadow", "status", "body", "silence", "delayed"]


class Answer(dict):
    """How the server answers one request: ``status``, ``body`` (bytes), ``delay`` (s), ``silence``."""


def allow() -> Answer:
    """``{"allow": true}``."""
    return Answer(status=200, body=b'{"allow":true}')


def deny(reason: Optional[str] = None) -> Answer:
    """``{"allow": false, "reason"}`` (no reason when None): the call is answered 40305."""
    answer: Dict[str, Any] = {"allow": False}
    if reason is not None:
        answer["reason"] = reason
    return Answer(status=200, body=json.dumps(answer).encode())


def rewrite(**fields: Any) -> Answer:
    """``{"allow": true, **fields}``: ``name``/``role``/``attributes`` (join), ``info`` (message),
    ``text`` (question), ``note`` (stage request)."""
    return Answer(status=200, body=json.dumps({"allow": True, **fields}).encode())


def shadow() -> Answer:
    """``{"allow": true, "shadow": true}``: the message is shadowed (section 31)."""
    return Answer(status=200, body=b'{"allow":true,"shadow":true}')


def status(code: int) -> Answer:
    """That status with an empty body: a failed hook."""
    return Answer(status=code, body=b"")


def body(raw: bytes) -> Answer:
    """200 with these bytes as the body (garbage, or over 64 KiB: a failed hook)."""
    return Answer(status=200, body=bytes(raw))


def silence() -> Answer:
    """No answer at all: roomd's ``timeout_ms`` makes it a failed hook."""
    return Answer(silence=True)


def delayed(seconds: float, then: Answer) -> Answer:
    """``then``, after ``seconds``."""
    return Answer(then, delay=seconds)


class HookServer:
    """A hook on 127.0.0.1 (a free port). Give it to a daemon with ``RoomdProcess(hooks=server)``
    (or ``roomd_factory(hooks=server)``): the daemon's template gets ``settings.hooks.url =
    server.url`` and the server its secret. ``requests()`` are the verified requests so far;
    ``await next(type)`` waits for the next one of a type."""

    def __init__(self, secret: Union[bytes, str, None] = None, default: Optional[Answer] = None):
        self.secret: Optional[bytes] = secret.encode() if isinstance(secret, str) else secret
        self.default: Answer = default or allow()
        self.decide: Optional[Callable[[Dict[str, Any]], Optional[Answer]]] = None
        self._queued: List[Answer] = []
        self._requests: List[Dict[str, Any]] = []
        self._taken = 0
        self._lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                headers = dict(self.headers.items())
                with server._lock:
                    server._requests.append({"headers": headers, "body": raw})
                    queued = server._queued.pop(0) if server._queued else None
                answer = queued or server._decided(raw, headers) or server.default
                while "delay" in answer:
                    time.sleep(answer["delay"])
                    answer = Answer({k: v for k, v in answer.items() if k != "delay"})
                if answer.get("silence"):
                    self.close_connection = True
                    while self.rfile.read(1):  # until roomd gives up on it
                        pass
                    return
                self.send_response(answer["status"])
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(answer["body"])))
                self.end_headers()
                try:
                    self.wfile.write(answer["body"])
                except OSError:
                    self.close_connection = True  # roomd stopped reading (an oversize body)

            def log_message(self, *_: Any) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            request_queue_size = 256

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hook"
        self._thread = threading.Thread(target=self._server.serve_forever, name="roomd-hook-server", daemon=True)
        self._thread.start()

    def answer(self, *answers: Answer) -> None:
        """Answers the next requests with these, in order (after those queued before)."""
        with self._lock:
            self._queued.extend(answers)

    def _decided(self, raw: bytes, headers: Dict[str, str]) -> Optional[Answer]:
        if self.decide is None or self.secret is None:
            return None
        checked = verify(raw, headers, self.secret, max_age_ms=None)
        return self.decide(checked.event) if checked else None

    def requests(self) -> List[Dict[str, Any]]:
        """Every request so far, in arrival order, each verified with ``secret``."""
        if self.secret is None:
            raise RuntimeError("HookServer has no secret: start the daemon with hooks=server, or set server.secret")
        with self._lock:
            requests = list(self._requests)
        events = []
        for request in requests:
            checked = verify(request["body"], request["headers"], self.secret, max_age_ms=None)
            assert checked, f"a hook request did not verify: {checked.reason}"
            events.append(checked.event)
        return events

    async def next(self, type: Optional[str] = None, timeout: float = 10.0) -> Dict[str, Any]:
        """The next request not taken yet (of ``type``, when given; the ones skipped are taken too)."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.requests()
            while self._taken < len(events):
                event = events[self._taken]
                self._taken += 1
                if type is None or event["type"] == type:
                    return event
            if time.monotonic() > deadline:
                seen = ", ".join(e["type"] for e in events) or "none"
                raise asyncio.TimeoutError(f"timed out after {timeout:g} s waiting for hook request "
                                           f"{type or '(any)'}; received so far: {seen}")
            await asyncio.sleep(0.01)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
