"""The audience feed (PROTOCOL.md section 24): viewers without a WebSocket poll
``GET /v2/rooms/{room_id}/feed?from=S&to=T`` every few seconds.

Like the HotMic SDK, a :class:`FeedReader` asks every ``interval`` seconds with
times floored to whole seconds, and on a grid: every reader of a room asks for
the same spans ([T - 3, T) with T a multiple of 3), so that roomd — or a CDN in
front of it — answers all of them with one cached body. A reader that fell
behind (a stall, a sleep) catches up with spans of at most 60 s; one that fell
behind the feed's window (410) starts again from now. A reader keeps its HTTP
connection between polls (roomd keeps a GET's connection alive, PROTOCOL.md
section 9) and opens a new one when it was closed.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import math
import time
import urllib.parse
from typing import AsyncIterator, Callable, Dict, List, Optional, Tuple

MAX_SPAN = 60


class FeedError(Exception):
    """A feed answer other than 200/304: ``status`` and roomd's ``{code, message}``."""

    def __init__(self, status: int, code: int, message: str):
        super().__init__(f"{status} {code}: {message}")
        self.status = status
        self.code = code
        self.message = message


class FeedReader:
    """Polls a room's feed; ``async for span in reader`` yields each decoded
    span (``{room_id, from, to, stream, peer_count, chat, deleted, pinned,
    reactions, polls, poll_stats, questions, chat_state, ended}``) in order,
    and stops after the one that says ``ended``.

    ``base_url``: roomd's HTTP address (``RoomdProcess.http_url``, or a CDN's).
    ``token``: an app token of the room, or a management token; None for a
    public feed. ``clock`` returns seconds since the epoch (a test-mode daemon's
    clock: ``lambda: roomd.clock() / 1000``); ``sleep`` waits that many seconds.
    """

    def __init__(self, base_url: str, room: str, token: Optional[str] = None, interval: int = 3,
                 clock: Callable[[], float] = time.time,
                 sleep: Callable[[float], "asyncio.Future"] = asyncio.sleep, timeout: float = 10.0):
        if interval < 1 or interval > MAX_SPAN:
            raise ValueError("interval: 1 to 60 seconds")
        self.base_url = base_url.rstrip("/")
        self.room = room
        self.token = token
        self.interval = int(interval)
        self.clock = clock
        self.sleep = sleep
        self.timeout = timeout
        self.last_to: Optional[int] = None
        self.ended = False
        self._etags: Dict[Tuple[int, int], Tuple[str, dict]] = {}
        self._connection: Optional[http.client.HTTPConnection] = None
        self._prefix = ""

    def spans_due(self) -> List[Tuple[int, int]]:
        """The spans to ask for now: from the last one's end to the last grid point
        (whole seconds, a multiple of ``interval``), in pieces of at most 60 s."""
        now = math.floor(self.clock())
        to = now - now % self.interval
        start = to - self.interval if self.last_to is None else self.last_to
        spans = []
        while start < to:
            end = min(to, start + MAX_SPAN)
            spans.append((start, end))
            start = end
        return spans

    def _request(self, path: str, headers: Dict[str, str]) -> Tuple[int, bytes, Optional[str]]:
        """GET on the kept connection; a connection the server closed meanwhile
        (idle for 5 s, restarted) is opened again once."""
        for attempt in (0, 1):
            if self._connection is None:
                parts = urllib.parse.urlsplit(self.base_url)
                factory = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
                self._connection = factory(parts.netloc, timeout=self.timeout)
                self._prefix = parts.path
            try:
                self._connection.request("GET", self._prefix + path, headers=headers)
                response = self._connection.getresponse()
                body = response.read()
                if response.will_close:
                    self._close()
                return response.status, body, response.getheader("ETag")
            except (http.client.HTTPException, ConnectionError, OSError):
                self._close()
                if attempt == 1:
                    raise
        raise AssertionError("unreachable")

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def close(self) -> None:
        """Closes the kept HTTP connection (a later poll opens another)."""
        self._close()

    def fetch(self, start: int, end: int) -> dict:
        """One span, decoded (blocking). A 304 answers with the body kept for its ETag."""
        query = urllib.parse.urlencode({"from": start, "to": end})
        path = f"/v2/rooms/{urllib.parse.quote(self.room, safe='')}/feed?{query}"
        headers: Dict[str, str] = {}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        kept = self._etags.get((start, end))
        if kept:
            headers["If-None-Match"] = kept[0]
        status, raw, etag = self._request(path, headers)
        if status == 200:
            body = json.loads(raw)
            if etag:
                self._etags = {(start, end): (etag, body)}  # only the latest: the next span is another
            return body
        if status == 304 and kept:
            return kept[1]
        try:
            answer = json.loads(raw)
            raise FeedError(status, int(answer.get("code", status)), str(answer.get("message", "")))
        except (ValueError, AttributeError):
            raise FeedError(status, status, raw.decode(errors="replace"))

    async def poll(self) -> List[dict]:
        """Asks for every span due now; returns them in order (empty when none is due).
        404 (no session yet) is skipped silently; 410 starts again from now."""
        spans: List[dict] = []
        for start, end in self.spans_due():
            try:
                body = await asyncio.to_thread(self.fetch, start, end)
            except FeedError as error:
                if error.status == 410:  # fell behind the window: from now on
                    self.last_to = None
                    return spans
                if error.status == 404:  # no session at that time (yet): nothing to tell
                    self.last_to = end
                    continue
                raise
            self.last_to = end
            spans.append(body)
            if body.get("ended"):
                self.ended = True
                break
        return spans

    async def __aiter__(self) -> AsyncIterator[dict]:
        try:
            while not self.ended:
                for span in await self.poll():
                    yield span
                if not self.ended:
                    await self.sleep(self.interval)
        finally:
            self._close()
