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

import http.server
import json
import time
from typing import Any, Callable, Dict, List, Optional, Union

from ._loopback import LoopbackReceiver
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


class HookServer(LoopbackReceiver):
    """A hook on 127.0.0.1 (a free port). Give it to a daemon with ``RoomdProcess(hooks=server)``
    (or ``roomd_factory(hooks=server)``): the daemon's template gets ``settings.hooks.url =
    server.url`` and the server its secret. ``requests()`` are the verified requests so far;
    ``await next(type)`` waits for the next one of a type."""

    _noun = "hook request"
    _given_as = "hooks=server"

    def __init__(self, secret: Union[bytes, str, None] = None, default: Optional[Answer] = None):
        self.default: Answer = default or allow()
        self.decide: Optional[Callable[[Dict[str, Any]], Optional[Answer]]] = None
        self._queued: List[Answer] = []
        super().__init__(secret, "/hook", "roomd-hook-server", queue_size=256)

    def answer(self, *answers: Answer) -> None:
        """Answers the next requests with these, in order (after those queued before)."""
        with self._lock:
            self._queued.extend(answers)

    def _answer(self, handler: http.server.BaseHTTPRequestHandler, request: Dict[str, Any]) -> None:
        with self._lock:
            queued = self._queued.pop(0) if self._queued else None
        answer = queued or self._decided(request["body"], request["headers"]) or self.default
        while "delay" in answer:
            time.sleep(answer["delay"])
            answer = Answer({k: v for k, v in answer.items() if k != "delay"})
        if answer.get("silence"):
            handler.close_connection = True
            while handler.rfile.read(1):  # until roomd gives up on it
                pass
            return
        handler.send_response(answer["status"])
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(answer["body"])))
        handler.end_headers()
        try:
            handler.wfile.write(answer["body"])
        except OSError:
            handler.close_connection = True  # roomd stopped reading (an oversize body)

    def _decided(self, raw: bytes, headers: Dict[str, str]) -> Optional[Answer]:
        if self.decide is None or self.secret is None:
            return None
        checked = verify(raw, headers, self.secret, max_age_ms=None)
        return self.decide(checked.event) if checked else None

    def requests(self) -> List[Dict[str, Any]]:
        """Every request so far, in arrival order, each verified with ``secret``."""
        return self._events()
