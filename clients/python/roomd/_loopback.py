"""The one loopback HTTP receiver under the kit's test servers: :class:`roomd.webhooks.WebhookSink`
and :class:`roomd.hooks.HookServer` are two handlers on it (the Swift kit's ``LoopbackHTTPServer``).

It listens on 127.0.0.1 (a free port), serves each connection on a thread of its own (roomd keeps
its connections alive and sends the next request on them; one held answer holds only its own
connection), keeps every POST (``path``, ``headers``, ``body``) and lets the handler answer it.
:meth:`LoopbackReceiver._events` verifies what was kept with ``secret`` (a request that does not
verify fails the test, saying why); :meth:`LoopbackReceiver.next` waits for the next event of a type.
Bounds: those of ``http.server`` (a request line or header line of at most 64 KiB, at most 100
headers), and ``queue_size`` connections waiting to be accepted.
"""
from __future__ import annotations

import asyncio
import http.server
import socketserver
import threading
import time
from typing import Any, Dict, List, Optional, Union


class LoopbackReceiver:
    """Base of the kit's test servers. A subclass names what it receives (``_noun``: "webhook",
    "hook request"), how a daemon gets it (``_given_as``, e.g. ``"webhooks=sink"``), and answers in
    :meth:`_answer`."""

    _noun = "request"
    _given_as = "receiver=receiver"

    def __init__(self, secret: Union[bytes, str, None], path: str, name: str, queue_size: int = 5):
        self.secret: Optional[bytes] = secret.encode() if isinstance(secret, str) else secret
        self._received: List[Dict[str, Any]] = []
        self._taken = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                request = {"path": self.path, "headers": dict(self.headers.items()),
                           "body": self.rfile.read(int(self.headers.get("Content-Length", "0")))}
                receiver._keep(request)
                receiver._answer(self, request)

            def log_message(self, *_: Any) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            request_queue_size = queue_size

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}{path}"
        self._thread = threading.Thread(target=self._server.serve_forever, name=name, daemon=True)
        self._thread.start()

    def _keep(self, request: Dict[str, Any]) -> None:
        with self._lock:
            self._received.append(request)

    def _answer(self, handler: http.server.BaseHTTPRequestHandler, request: Dict[str, Any]) -> None:
        """Answers one request (the handler's thread): 200, no body."""
        handler.send_response(200)
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _events(self) -> List[Dict[str, Any]]:
        """Every request so far, in arrival order, each verified with ``secret``."""
        from .webhooks import verify  # webhooks.py builds on this module

        if self.secret is None:
            name = self._given_as.split("=")[1]
            raise RuntimeError(f"{type(self).__name__} has no secret: start the daemon with {self._given_as}, "
                               f"or set {name}.secret")
        with self._lock:
            requests = list(self._received)
        events = []
        for request in requests:
            checked = verify(request["body"], request["headers"], self.secret, max_age_ms=None)
            assert checked, f"a {self._noun.split()[0]} request did not verify: {checked.reason}"
            events.append(checked.event)
        return events

    async def next(self, type: Optional[str] = None, timeout: float = 10.0) -> Dict[str, Any]:
        """The next event not taken yet (of ``type``, when given; the ones skipped are taken too)."""
        deadline = time.monotonic() + timeout
        while True:
            events = self._events()
            while self._taken < len(events):
                event = events[self._taken]
                self._taken += 1
                if type is None or event["type"] == type:
                    return event
            if time.monotonic() > deadline:
                seen = ", ".join(e["type"] for e in events) or "none"
                raise asyncio.TimeoutError(f"timed out after {timeout:g} s waiting for {self._noun} "
                                           f"{type or '(any)'}; received so far: {seen}")
            await asyncio.sleep(0.01)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
