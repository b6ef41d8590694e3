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

import hashlib
import hmac
import json
import time
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Union

from ._loopback import LoopbackReceiver

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


class WebhookSink(LoopbackReceiver):
    """An HTTP receiver on 127.0.0.1 (a free port) that answers 200 and keeps every request.

    Give it to a daemon with ``RoomdProcess(webhooks=sink)`` (or ``roomd_factory(webhooks=sink)``):
    the daemon's template gets ``settings.webhooks.url = sink.url`` and the sink its secret.
    ``events()`` are the verified events so far (a request that does not verify fails the test
    with the reason); ``await next(type)`` waits for the next one of a type. ``requests``: every
    request as it arrived (``path``, ``headers``, ``body``)."""

    _noun = "webhook"
    _given_as = "webhooks=sink"

    def __init__(self, secret: Union[bytes, str, None] = None):
        super().__init__(secret, "/hooks", "roomd-webhook-sink")
        self.requests: List[Dict[str, Any]] = self._received

    def events(self) -> List[Dict[str, Any]]:
        """Every event received so far, in arrival order, each verified with ``secret``."""
        return self._events()
