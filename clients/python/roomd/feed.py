"""The audience feed (PROTOCOL.md section 24): viewers without a WebSocket poll
``GET /v2/rooms/{room_id}/feed?from=S&to=T`` every few seconds.

Like the HotMic SDK, a :class:`FeedReader` asks every ``interval`` seconds with
times floored to whole seconds, and on a grid: every reader of a room asks for
the same spans ([T - 3, T) with T a multiple of 3), so that roomd — or a CDN in
front of it — answers all of them with one cached body. A reader that fell
behind (a stall, a sleep) catches up with spans of at most 60 s; one that fell
behind the feed's window (410) starts again from now.
"""
from __future__ import annotations

import asyncio
import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
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

    def fetch(self, start: int, end: int) -> dict:
        """One span, decoded (blocking). A 304 answers with the body kept for its ETag."""
        query = urllib.parse.urlencode({"from": start, "to": end})
        request = urllib.request.Request(f"{self.base_url}/v2/rooms/{urllib.parse.quote(self.room, safe='')}/feed?{query}")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        kept = self._etags.get((start, end))
        if kept:
            request.add_header("If-None-Match", kept[0])
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                body = json.loads(response.read())
                etag = response.headers.get("ETag")
                if etag:
                    self._etags = {(start, end): (etag, body)}  # only the latest: the next span is another
                return body
        except urllib.error.HTTPError as error:
            if error.code == 304 and kept:
                return kept[1]
            raw = error.read()
            try:
                answer = json.loads(raw)
                raise FeedError(error.code, int(answer.get("code", error.code)), str(answer.get("message", "")))
            except (ValueError, AttributeError):
                raise FeedError(error.code, error.code, raw.decode(errors="replace"))

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
        while not self.ended:
            for span in await self.poll():
                yield span
            if not self.ended:
                await self.sleep(self.interval)
