"""Webhooks as an app backend receives them (PROTOCOL.md section 17).

:func:`verify` checks one request and gives back the event or the reason it
is not roomd's (the Swift kit's ``WebhookVerifier``); :class:`WebhookSink` is
a receiver on a free loopback port for tests that assert the events a
scenario sends (the pytest fixture ``webhook_sink``)::

    def test_joins_are_reported(roomd_factory, webhook_sink):
        roomd = roomd_factory(webhooks=webhook_sink)
        async def scenario():
            await roomd.join("show", "ada", "host")
            event = await webhook_sink.next("peer.join.success")
            assert event["data"]["user_id"] == "ada"
        asyncio.run(scenario())
"""
from __future__ import annotations

import asyncio
import hashlib
import hmac
import http.server
import json
import socketserver
import threading
import time
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Union

__all__ = ["verify", "Verification", "WebhookSink"]


class Verification(NamedTuple):
    """The event (``{"version", "id", "timestamp", "type", "data"}``) when the request is a fresh
    webhook signed with the secret, else ``event`` None and ``reason`` saying why. Truthy when valid."""
    event: Optional[Dict[str, Any]]
    reason: Optional[str]

    def __bool__(self) -> bool:
        return self.event is not None


def _signature(secret: bytes, timestamp: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()


def verify(body: bytes, headers: Mapping[str, str], secret: Union[bytes, str], max_age_ms: Optional[int] = 300_000,
           now_ms: Optional[int] = None) -> Verification:
    """Checks a webhook request: ``body`` the raw bytes (before any JSON parsing), ``headers`` its
    headers (names in any case), ``secret`` ``ROOMD_WEBHOOK_SECRET`` when the daemon has one, else its
    HS256 secret (read from a file, drop one trailing newline, as roomd does). ``max_age_ms``: how
    far ``X-Roomd-Timestamp`` may be from ``now_ms`` (replays); None: not checked."""
    key = secret.encode() if isinstance(secret, str) else bytes(secret)
    lower = {name.lower(): value for name, value in headers.items()}
    timestamp = lower.get("x-roomd-timestamp")
    signature = lower.get("x-roomd-signature")
    if timestamp is None:
        return Verification(None, "no X-Roomd-Timestamp header")
    if not (timestamp.isascii() and timestamp.isdigit()):
        return Verification(None, f"X-Roomd-Timestamp is not a time in milliseconds: {timestamp[:40]}")
    if signature is None:
        return Verification(None, "no X-Roomd-Signature header")
    if not signature.startswith("sha256="):
        return Verification(None, f"X-Roomd-Signature does not start with sha256=: {signature[:40]}")
    if not hmac.compare_digest(signature, _signature(key, timestamp, body)):
        if key.endswith(b"\n") and hmac.compare_digest(signature, _signature(key[:-1], timestamp, body)):
            return Verification(None, "the signature matches the secret without its trailing newline: strip it "
                                      "(roomd ignores one trailing newline of a secret file)")
        return Verification(None, "the signature does not match: another secret (ROOMD_WEBHOOK_SECRET, else the "
                                  "daemon's), or the body was changed (verify the raw bytes, before any JSON parsing)")
    if max_age_ms is not None:
        age = (int(time.time() * 1000) if now_ms is None else now_ms) - int(timestamp)
        if abs(age) > max_age_ms:
            return Verification(None, f"stale: X-Roomd-Timestamp is {round(abs(age) / 1000)} s "
                                      f"{'old' if age > 0 else 'ahead'}, more than {max_age_ms // 1000} s (a replay?)")
    try:
        event = json.loads(body)
    except ValueError:
        event = None
    if not (isinstance(event, dict) and isinstance(event.get("type"), str) and isinstance(event.get("id"), str)):
        return Verification(None, "signed, but the body is not a webhook event {version, id, timestamp, type, data}")
    return Verification(event, None)


class WebhookSink:
    """An HTTP receiver on 127.0.0.1 (a free port) that answers 200 and keeps every request.

    Give it to a daemon with ``RoomdProcess(webhooks=sink)`` (or ``roomd_factory(webhooks=sink)``):
    the daemon's template gets ``settings.webhooks.url = sink.url`` and the sink its secret.
    ``events()`` are the verified events so far (a request that does not verify fails the test
    with the reason); ``await next(type)`` waits for the next one of a type."""

    def __init__(self, secret: Union[bytes, str, None] = None):
        self.secret: Optional[bytes] = secret.encode() if isinstance(secret, str) else secret
        self.requests: List[Dict[str, Any]] = []
        self._taken = 0
        self._lock = threading.Lock()
        sink = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                with sink._lock:
                    sink.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": body})
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/hooks"
        self._thread = threading.Thread(target=self._server.serve_forever, name="roomd-webhook-sink", daemon=True)
        self._thread.start()

    def events(self) -> List[Dict[str, Any]]:
        """Every event received so far, in arrival order, each verified with ``secret``."""
        if self.secret is None:
            raise RuntimeError("WebhookSink has no secret: start the daemon with webhooks=sink, or set sink.secret")
        with self._lock:
            requests = list(self.requests)
        events = []
        for request in requests:
            checked = verify(request["body"], request["headers"], self.secret, max_age_ms=None)
            assert checked, f"a webhook request did not verify: {checked.reason}"
            events.append(checked.event)
        return events

    async def next(self, type: Optional[str] = None, timeout: float = 10.0) -> Dict[str, Any]:
        """The next event not taken yet (of ``type``, when given; the ones skipped are taken too)."""
        deadline = time.monotonic() + timeout
        while True:
            events = self.events()
            while self._taken < len(events):
                event = events[self._taken]
                self._taken += 1
                if type is None or event["type"] == type:
                    return event
            if time.monotonic() > deadline:
                seen = ", ".join(e["type"] for e in events) or "none"
                raise asyncio.TimeoutError(f"timed out after {timeout:g} s waiting for webhook {type or '(any)'}; "
                                           f"received so far: {seen}")
            await asyncio.sleep(0.02)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
