"""An asyncio JSON-RPC client for roomd, the Python twin of the Swift RoomClient.

Three layers on one connection:

* typed helpers, one per common protocol call (``join``, ``leave``,
  ``broadcast``, ``track_add``, ``role_change_request``, ``role_change``,
  ``raise_hand`` ...), returning the result's interesting part as plain dicts;
* ``call(method, params)``: the raw call, returning ``result`` or raising
  :class:`RpcError` with the protocol ``code`` / ``message`` / ``data``;
* the inbox: every push (and anything that is not the answer to a pending
  call) is queued in arrival order; ``next(method)`` / ``next(method,
  where=predicate)`` take the params of the first matching push and leave
  the others queued in order, ``expect_silence(seconds)`` returns what
  arrived in a window, ``drain()`` empties it. A wait that runs out of time
  raises :class:`WaitTimeout`, which says what it waited for, for how long,
  and what was queued instead.
"""
from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import warnings
from typing import Any, Callable, Dict, List, Optional, Union

import websockets

from .methods import ProtocolMethods
from .pushes import PUSHES

__all__ = ["RoomClient", "RoomdError", "RpcError", "ConnectionClosed", "WaitTimeout", "UnknownPush", "PUSHES",
           "HAND_RAISE_GROUP", "connect", "push_summary", "close_pushes"]

HAND_RAISE_GROUP = "_handraise"
DEFAULT_TIMEOUT = 5.0


class RoomdError(Exception):
    """Base class of everything the client raises (its timeouts are :class:`WaitTimeout`)."""


class UnknownPush(RoomdError, ValueError):
    """``next(method)`` with a method that is not a push roomd sends (:data:`PUSHES`, from
    docs/openrpc.json), raised at once: ``push`` is the name, ``suggestions`` the close ones
    (:func:`close_pushes`)."""

    def __init__(self, push: str, suggestions: List[str]):
        self.push = push
        self.suggestions = suggestions
        if suggestions:
            text = f'unknown push "{push}": did you mean {", ".join(suggestions)}?'
        else:
            text = f'unknown push "{push}" (docs/openrpc.json lists every push)'
        super().__init__(text)


def _edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        next_row = [i]
        for j in range(1, len(b) + 1):
            next_row.append(min(row[j] + 1, next_row[j - 1] + 1, row[j - 1] + (a[i - 1] != b[j - 1])))
        row = next_row
    return row[len(b)]


def close_pushes(name: str) -> List[str]:
    """The push names close to ``name`` (edit distance <= 3, or one ends or starts the other),
    closest first, at most 3."""
    close = []
    for push in PUSHES:
        distance = _edit_distance(name, push)
        affix = push.startswith(name) or name.startswith(push) or push.endswith(name) or name.endswith(push)
        if distance <= 3 or affix:
            close.append((0 if affix else 1, distance, push))
    return [push for _, _, push in sorted(close)[:3]]


class WaitTimeout(RoomdError, asyncio.TimeoutError):
    """A wait (``next``, ``next_message``, ``call``) ran out of time.

    Also an ``asyncio.TimeoutError`` (the builtin ``TimeoutError``), so
    existing ``except`` clauses keep working. ``waited_for`` is what was
    awaited (``"on-peer-join"``, ``"on-broadcast where <description>"``,
    ``"the answer to join"``), ``timeout`` the seconds, ``queued`` the
    inbox entries still queued (at most 10, each as :func:`push_summary`
    gives it) and ``queued_count`` how many there were. ``str()`` says all
    of it in one line; the traceback's last line of your code is the wait."""

    LIMIT = 10

    def __init__(self, waited_for: str, timeout: float, inbox: List[Any]):
        self.waited_for = waited_for
        self.timeout = timeout
        self.queued = [push_summary(entry) for entry in inbox[:self.LIMIT]]
        self.queued_count = len(inbox)
        text = f"timed out after {timeout:g} s waiting for {waited_for}; "
        if not inbox:
            text += "nothing queued"
        else:
            text += f"{len(inbox)} {'entry' if len(inbox) == 1 else 'entries'} queued: " + ", ".join(self.queued)
            if len(inbox) > self.LIMIT:
                text += f", … {len(inbox) - self.LIMIT} more"
        super().__init__(text)


def push_summary(entry: Any) -> str:
    """One inbox entry in a line: a push as ``method {params excerpt}`` (80 characters at most)."""
    def excerpt(value: Any) -> str:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        return text if len(text) <= 80 else text[:79] + "…"
    if isinstance(entry, dict) and isinstance(entry.get("method"), str):
        return entry["method"] + " " + excerpt(entry.get("params", {}))
    if isinstance(entry, dict) and "id" in entry:
        return f"response id={entry['id']} " + excerpt(entry)
    return ("text " if isinstance(entry, str) else "") + excerpt(entry)


class RpcError(RoomdError):
    """The server answered a call with a JSON-RPC error (PROTOCOL.md section 8)."""

    def __init__(self, code: int, message: str, data: Any = None, method: Optional[str] = None):
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        text = f"rpc error {code}: {message}"
        if data is not None:
            text += " " + json.dumps(data)
        super().__init__(text)


class ConnectionClosed(RoomdError):
    """The connection ended (and, for the inbox, nothing matching is left).

    ``code`` is the close code the server sent, 1006 if it dropped without a
    close frame, 1005 if its close frame had no code."""

    def __init__(self, code: int, reason: str = ""):
        self.code = code
        self.reason = reason
        super().__init__(f"closed ({code}{' ' + reason if reason else ''})")


#: A push predicate: called with a push's ``params`` (``{}`` when it has none), truthy when it is the one.
Predicate = Callable[[Dict[str, Any]], Any]


class RoomClient(ProtocolMethods):
    """One WebSocket connection to roomd. Create it with :meth:`connect`."""

    def __init__(self, ws: Any):
        self._ws = ws
        self._ids = itertools.count(1)
        self._pending: Dict[Any, asyncio.Future] = {}
        self._inbox: List[Any] = []
        self._changed = asyncio.Condition()
        self._closed: Optional[ConnectionClosed] = None
        self.peer_id: Optional[str] = None
        #: Called with every push as it arrives, before it is queued for :meth:`next` (a tap for
        #: logs and recorders; it must not block).
        self.on_push: Optional[Callable[[dict], None]] = None
        self._reader = asyncio.get_running_loop().create_task(self._read())

    # -- connecting -------------------------------------------------------

    @classmethod
    async def connect(cls, url: str, timeout: float = DEFAULT_TIMEOUT) -> "RoomClient":
        """Connects to ``ws://host:port/ws`` (the URL of roomd's listening line)."""
        kwargs: Dict[str, Any] = {"max_size": None, "open_timeout": timeout}
        if "proxy" in inspect.signature(websockets.connect).parameters:
            kwargs["proxy"] = None  # websockets >= 15 would honour *_proxy variables, even for loopback
        ws = await websockets.connect(url, **kwargs)
        return cls(ws)

    async def __aenter__(self) -> "RoomClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- the raw layer ----------------------------------------------------

    async def call(self, method: str, params: Optional[dict] = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """Sends a request with a fresh integer id and returns its ``result``.

        Raises :class:`RpcError` for an error answer, :class:`ConnectionClosed`
        if the connection ends first, ``asyncio.TimeoutError`` after ``timeout``."""
        if self._closed:
            raise self._closed
        call_id = next(self._ids)
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": call_id, "method": method}
        if params is not None:
            message["params"] = params
        future = asyncio.get_running_loop().create_future()
        self._pending[call_id] = future
        try:
            await self._ws.send(json.dumps(message, separators=(",", ":")))
            response = await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise WaitTimeout(f"the answer to {method}", timeout, list(self._inbox)) from None
        except websockets.ConnectionClosed:
            await self._wait_reader()
            raise self._closed or ConnectionClosed(1006)
        finally:
            self._pending.pop(call_id, None)
        if "error" in response:
            error = response["error"] or {}
            raise RpcError(error.get("code", 0), error.get("message", ""), error.get("data"), method)
        return response.get("result")

    async def notify(self, method: str, params: Optional[dict] = None) -> None:
        """Sends a notification (no id: nothing is answered; a failure comes as an ``on-error`` push)."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send_text(json.dumps(message, separators=(",", ":")))

    async def send_text(self, text: str) -> None:
        """Sends one text message exactly as given."""
        if self._closed:
            raise self._closed
        try:
            await self._ws.send(text)
        except websockets.ConnectionClosed:
            await self._wait_reader()
            raise self._closed or ConnectionClosed(1006)

    async def next_message(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """The next inbox entry (a push, a batch answer, or raw text that was not JSON)."""
        return await self._take(lambda entry: entry, timeout, "a message (any)")

    async def next(self, method: Union[str, Callable[[Dict[str, Any]], Any], None] = None,
                   timeout: float = DEFAULT_TIMEOUT, *, where: Optional[Predicate] = None,
                   description: Optional[str] = None) -> Any:
        """The ``params`` of the first push of ``method`` whose params pass ``where``;
        that push leaves the inbox, the entries before it stay queued in order.

        The one predicate contract of the three kits (Swift's
        ``next(_:where:)``, roomd.js's ``next(method, {where})``): ``method``
        filters by name (None: any push), ``where(params)`` gets the push's
        ``params`` (``{}`` when it has none) and is truthy for the one
        wanted. A predicate that raises KeyError, IndexError or TypeError on
        a push (another shape) does not match it::

            update = await host.next("on-peer-update", where=lambda p: p["peer"]["peer_id"] == guest_id)

        Raises :class:`UnknownPush` (a ValueError) at once when ``method`` is not a push roomd
        sends (:data:`PUSHES`, from docs/openrpc.json), naming the close ones::

            unknown push "on-role-change-requested": did you mean on-role-change-request, on-role-change-rejected?

        Raises :class:`WaitTimeout` (it names ``description``, else the
        method and the predicate's name, and lists the pushes queued) or
        :class:`ConnectionClosed` once the connection has ended and no such
        push is left.

        Deprecated: ``next(predicate)``, a callable first, calls it with the
        whole push ``{"method", "params"}`` and returns the push for
        ``True``, any other truthy result as is (a DeprecationWarning says so)."""
        if callable(method):
            warnings.warn("next(predicate) gets the whole push and is deprecated: use "
                          "next(method, where=predicate), whose predicate gets the params",
                          DeprecationWarning, stacklevel=2)
            return await self._next_whole_push(method, timeout, description or "a push the predicate takes")
        name, test = method, where
        if name is not None and name not in PUSHES:  # a misspelled push: at once, not after the timeout
            raise UnknownPush(name, close_pushes(name))

        def matcher(entry: Any) -> Any:
            if not (isinstance(entry, dict) and isinstance(entry.get("method"), str) and "id" not in entry):
                return None
            if name is not None and entry["method"] != name:
                return None
            params = entry.get("params") or {}
            if test is not None:
                try:
                    if not test(params):
                        return None
                except (KeyError, IndexError, TypeError):  # a push of another shape: not this one
                    return None
            return params

        waited_for = description or (name or "a push (any)")
        if test is not None and description is None:
            waited_for += " where " + getattr(test, "__name__", "<predicate>")
        return await self._take(matcher, timeout, waited_for)

    async def _next_whole_push(self, predicate: Callable[[Dict[str, Any]], Any], timeout: float,
                               waited_for: str) -> Any:
        def matcher(entry: Any) -> Any:
            if not (isinstance(entry, dict) and "method" in entry and "id" not in entry):
                return None
            try:
                value = predicate(entry)
            except (KeyError, IndexError, TypeError):  # a push of another shape: not this one
                return None
            if value is True:
                return entry
            return value if value else None  # falsy (None, False, [], 0, ""): no match

        return await self._take(matcher, timeout, waited_for)

    def drain(self) -> List[Any]:
        """Removes and returns everything in the inbox."""
        entries, self._inbox = self._inbox, []
        return entries

    async def expect_silence(self, seconds: float) -> List[Any]:
        """Waits ``seconds``, then removes and returns what is in the inbox (assert it is empty)."""
        await asyncio.sleep(seconds)
        return self.drain()

    # -- closing ----------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed is not None

    async def close_code(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        """Waits for the connection to end; the close code the server sent
        (1006 without a close frame, or this client's code if it closed first)."""
        await asyncio.wait_for(asyncio.shield(self._reader), timeout)
        assert self._closed is not None
        return self._closed.code

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Closes the connection (waits up to a few seconds for the close handshake)."""
        try:
            await self._ws.close(code, reason)
        finally:
            await self._wait_reader()

    async def abort(self) -> None:
        """Drops the connection without a close frame, as a lost network does: roomd keeps
        the peer for its reconnect grace (PROTOCOL.md section 7)."""
        self._ws.transport.abort()
        await self._wait_reader()

    # -- token refresh (PROTOCOL.md section 23) ---------------------------

    def refresh_tokens(self, provider: Callable[[], Any]) -> "asyncio.Task[None]":
        """Keeps this peer's token fresh by itself: at each ``on-token-expiring`` it asks
        ``provider`` (a function or coroutine function your backend's minting sits
        behind) for a new token and sends ``token-refresh``. The warnings are taken from
        the inbox; other pushes stay. A failed refresh is tried again after 1, 2, 4 and
        8 s. The task ends when the connection closes; cancel it to stop sooner::

            refresher = viewer.refresh_tokens(lambda: backend.token("bob"))
        """
        async def run() -> None:
            while not self.closed:
                try:
                    await self.next("on-token-expiring", timeout=3600)
                except ConnectionClosed:
                    return
                except asyncio.TimeoutError:
                    continue
                for delay in (0, 1, 2, 4, 8):
                    if delay:
                        await asyncio.sleep(delay)
                    if self.closed:
                        return
                    try:
                        token = provider()
                        if asyncio.iscoroutine(token):
                            token = await token
                        await self.call("token-refresh", {"token": token})
                        break
                    except ConnectionClosed:
                        return
                    except Exception:  # the provider or the refresh failed: try again
                        continue

        return asyncio.get_running_loop().create_task(run())

    # -- typed helpers (PROTOCOL.md section 4) ----------------------------

    async def join(self, token: str, name: Optional[str] = None, data: Optional[str] = None,
                   room_id: Optional[str] = None, peer_id: Optional[str] = None,
                   timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``join``: returns ``{peer, room, policy, peers, resumed}``; remembers ``self.peer_id``."""
        result = await self.call("join", _params(token=token, name=name, data=data, room_id=room_id,
                                                 peer_id=peer_id), timeout)
        self.peer_id = result["peer"]["peer_id"]
        return result

    async def leave(self, reason: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``leave``: others get ``on-peer-leave``; the server then closes with 1000."""
        await self.call("leave", _params(reason=reason), timeout)

    async def peer_update(self, name: Optional[str] = None, data: Optional[str] = None,
                          timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``peer-update``: returns this peer as it is now."""
        return (await self.call("peer-update", _params(name=name, data=data), timeout))["peer"]

    async def track_add(self, type: str, track_id: Optional[str] = None, source: Optional[str] = None,
                        mute: Optional[bool] = None, description: Optional[str] = None,
                        timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``track-add`` (type "audio" or "video"): returns the track as stored."""
        params = _params(track_id=track_id, type=type, source=source, mute=mute, description=description)
        return (await self.call("track-add", params, timeout))["track"]

    async def track_update(self, track_id: str, mute: Optional[bool] = None, description: Optional[str] = None,
                           timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``track-update``: returns the track as it is now."""
        params = _params(track_id=track_id, mute=mute, description=description)
        return (await self.call("track-update", params, timeout))["track"]

    async def track_remove(self, track_id: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        await self.call("track-remove", {"track_id": track_id}, timeout)

    async def broadcast(self, message: str, type: str = "chat", peer_id: Optional[str] = None,
                        roles: Optional[List[str]] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``broadcast`` to everyone else, one peer (``peer_id``) or ``roles``: returns ``{message_id, timestamp}``."""
        params = _params(info={"message": message, "type": type}, peer_id=peer_id, roles=roles)
        return await self.call("broadcast", params, timeout)

    async def chat_history(self, before: Optional[str] = None, limit: Optional[int] = None,
                           timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``chat-history``: ``{messages (oldest first), more}``, the ``limit`` messages before ``before``."""
        return await self.call("chat-history", _params(before=before, limit=limit), timeout)

    async def message_delete(self, message_id: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``message-delete``: one's own message, or any with ``moderateChat``."""
        await self.call("message-delete", {"message_id": message_id}, timeout)

    async def chat_clear(self, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``chat-clear`` (``moderateChat``): empties the room's history."""
        await self.call("chat-clear", {}, timeout)

    async def message_pin(self, message_id: Optional[str], timeout: float = DEFAULT_TIMEOUT) -> None:
        """``message-pin`` (``moderateChat``): pins a message of the history; None unpins."""
        await self.call("message-pin", {"message_id": message_id}, timeout)

    async def question_add(self, text: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``question-add``: returns the Question."""
        return await self.call("question-add", {"text": text}, timeout)

    async def question_vote(self, question_id: str, vote: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``question-vote`` with ``vote`` ``"up"``, ``"down"`` or ``"none"``: returns the Question."""
        return await self.call("question-vote", {"question_id": question_id, "vote": vote}, timeout)

    async def question_list(self, state: Optional[str] = None, order: Optional[str] = None,
                            offset: Optional[int] = None, limit: Optional[int] = None,
                            timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``question-list``: ``{questions, total}``."""
        return await self.call("question-list", _params(state=state, order=order, offset=offset, limit=limit), timeout)

    async def question_update(self, question_id: str, state: Optional[str] = None, pinned: Optional[bool] = None,
                              timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``question-update`` (``moderateChat``; the asker may hide its own): returns the Question."""
        return await self.call("question-update", _params(question_id=question_id, state=state, pinned=pinned), timeout)

    async def question_delete(self, question_id: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        await self.call("question-delete", {"question_id": question_id}, timeout)
    async def react(self, target: str, type: str, count: Optional[int] = None,
                    timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``react``: a reaction to a message (``target`` a message id) or taps on
        ``"stream"`` / ``"contestant:<id>"`` (``count`` 1..50); ``{target, type, total}``."""
        return await self.call("react", _params(target=target, type=type, count=count), timeout)

    async def unreact(self, target: str, type: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``unreact``: takes this user's reaction off a message; ``{target, type, total}``."""
        return await self.call("unreact", {"target": target, "type": type}, timeout)

    async def reactions_get(self, targets: List[str], timeout: float = DEFAULT_TIMEOUT) -> List[dict]:
        """``reactions-get``: the ``counts`` ``[{target, type, total, mine}]`` of up to 100 targets."""
        return (await self.call("reactions-get", {"targets": list(targets)}, timeout))["counts"]

    async def peer_ban(self, user_id: Optional[str] = None, peer_id: Optional[str] = None,
                       duration_s: Optional[int] = None, reason: Optional[str] = None,
                       timeout: float = DEFAULT_TIMEOUT) -> None:
        """``peer-ban`` (``removeOthers``): every peer of the user (``user_id``, or the user of
        ``peer_id``) is removed (4001) and its joins and previews are 40301 until the ban ends."""
        await self.call("peer-ban", _params(user_id=user_id, peer_id=peer_id, duration_s=duration_s,
                                            reason=reason), timeout)

    async def peer_unban(self, user_id: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``peer-unban`` (``removeOthers``): lifts a user's ban."""
        await self.call("peer-unban", {"user_id": user_id}, timeout)

    async def chat_ban(self, user_id: Optional[str] = None, peer_id: Optional[str] = None,
                       duration_s: Optional[int] = None, shadow: Optional[bool] = None,
                       timeout: float = DEFAULT_TIMEOUT) -> None:
        """``chat-ban`` (``moderateChat``): the user may not send, ask or report (40302);
        only its peers get ``on-chat-state``. ``shadow=True`` (section 31): the user is not told,
        and its messages reach only its own peers and the moderators (``shadowed: true``)."""
        await self.call("chat-ban", _params(user_id=user_id, peer_id=peer_id, duration_s=duration_s,
                                            shadow=shadow), timeout)

    async def chat_unban(self, user_id: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        """``chat-unban`` (``moderateChat``)."""
        await self.call("chat-unban", {"user_id": user_id}, timeout)

    async def chat_state(self, paused: Optional[bool] = None, slow_mode_s: Optional[int] = None,
                         timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``chat-state`` (``moderateChat``): pause the chat, set slow mode (0 off); returns
        ``{paused, slow_mode_s}``. Every peer gets ``on-chat-state``."""
        return await self.call("chat-state", _params(paused=paused, slow_mode_s=slow_mode_s), timeout)

    async def report(self, reason: str, message_id: Optional[str] = None, question_id: Optional[str] = None,
                     peer_id: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> str:
        """``report`` of exactly one target to the moderators (``on-report``); returns ``report_id``
        (a repeat of the same target returns the first one's)."""
        params = _params(message_id=message_id, question_id=question_id, peer_id=peer_id, reason=reason)
        return (await self.call("report", params, timeout))["report_id"]

    async def report_resolve(self, report_id: str, note: Optional[str] = None,
                             timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``report-resolve`` (``moderateChat``, 1.3): resolve an open report; returns the Report
        (``status: "resolved"``). Every ``moderateChat`` peer gets ``on-report-update``; an unknown
        id is 40408, a resolved report 40904."""
        return (await self.call("report-resolve", _params(report_id=report_id, note=note), timeout))["report"]

    async def role_change_request(self, peer_id: str, role: str, force: bool = False,
                                  timeout: float = DEFAULT_TIMEOUT) -> Optional[str]:
        """``role-change-request`` for one peer: polite returns the request's token
        (None when the peer already has the role), forced returns None."""
        result = await self.call("role-change-request",
                                 {"requested_for": peer_id, "role": role, "force": force}, timeout)
        return (result or {}).get("token")

    async def change_roles(self, roles: List[str], role: str, timeout: float = DEFAULT_TIMEOUT) -> List[str]:
        """Bulk ``role-change-request`` (always forced): returns the changed peer ids."""
        result = await self.call("role-change-request", {"roles": roles, "role": role, "force": True}, timeout)
        return result["changed"]

    async def role_change(self, token: str, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``role-change``: accepts a polite request; returns this peer with its new role."""
        return (await self.call("role-change", {"token": token}, timeout))["peer"]

    async def role_change_reject(self, token: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        await self.call("role-change-reject", {"token": token}, timeout)

    async def track_update_request(self, peer_id: str, track_id: str, mute: bool,
                                   timeout: float = DEFAULT_TIMEOUT) -> None:
        await self.call("track-update-request", {"requested_for": peer_id, "track_id": track_id, "mute": mute},
                        timeout)

    async def change_track_mute_state(self, value: bool, roles: Optional[List[str]] = None,
                                      type: Optional[str] = None, source: Optional[str] = None,
                                      timeout: float = DEFAULT_TIMEOUT) -> int:
        params = _params(value=value, roles=roles, type=type, source=source)
        return (await self.call("change-track-mute-state-request", params, timeout))["tracks_affected"]

    async def peer_leave_request(self, peer_id: str, reason: Optional[str] = None,
                                 timeout: float = DEFAULT_TIMEOUT) -> None:
        """Removes a peer (it is closed with 4001)."""
        await self.call("peer-leave-request", _params(requested_for=peer_id, reason=reason), timeout)

    async def end_room(self, reason: Optional[str] = None, lock: bool = False,
                       timeout: float = DEFAULT_TIMEOUT) -> None:
        """Ends the room for everyone (closed with 4002)."""
        await self.call("end-room", _params(reason=reason, lock=lock), timeout)

    async def group_join(self, name: str, timeout: float = DEFAULT_TIMEOUT) -> List[str]:
        return (await self.call("group-join", {"name": name}, timeout))["groups"]

    async def group_leave(self, name: str, timeout: float = DEFAULT_TIMEOUT) -> List[str]:
        return (await self.call("group-leave", {"name": name}, timeout))["groups"]

    async def raise_hand(self, timeout: float = DEFAULT_TIMEOUT) -> List[str]:
        """Joins the ``_handraise`` group: every peer gets ``on-peer-update`` (changed ``groups``)."""
        return await self.group_join(HAND_RAISE_GROUP, timeout)

    async def lower_hand(self, timeout: float = DEFAULT_TIMEOUT) -> List[str]:
        return await self.group_leave(HAND_RAISE_GROUP, timeout)

    # -- the call-in queue (PROTOCOL.md section 26) ------------------------
    # The generated stage_request ... stage_unblock send the calls as they are; these read as a
    # harness scripts a call-in (Swift's askToJoinStage(note:), stageQueue(), invite(_:)).

    async def ask_to_join_stage(self, note: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``stage-request``: asks to come on stage; returns the StageRequest (``request_id``,
        ``status`` ``"waiting"``, ``position`` ...). A second ask of the same user returns the
        same request (its note replaced). Moderating peers see it in the next ``on-stage-queue``;
        this user's peers get ``on-stage-status`` (:meth:`next_stage_status`)."""
        return (await self.call("stage-request", _params(note=note), timeout))["request"]

    async def stage_queue(self, status: Optional[str] = None, offset: Optional[int] = None,
                          limit: Optional[int] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``stage-list`` (moderating): ``{requests, total}``, the waiting requests by position
        (another ``status``: newest first)."""
        return await self.call("stage-list", _params(status=status, offset=offset, limit=limit), timeout)

    async def invite(self, request: Union[dict, str], role: Optional[str] = None,
                     timeout: float = DEFAULT_TIMEOUT) -> dict:
        """``stage-invite`` (moderating) of a StageRequest (or its ``request_id``): a polite role
        change to ``role`` (the guest role by default); returns ``{request, token}``. The caller
        gets ``on-role-change-request`` and accepts with :meth:`role_change`; the request is then live."""
        request_id = request["request_id"] if isinstance(request, dict) else request
        return await self.call("stage-invite", _params(request_id=request_id, role=role), timeout)

    async def next_stage_queue(self, where: Optional[Predicate] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """The next ``on-stage-queue`` (moderating peers, coalesced every ``settings.stage.interval_ms``)
        whose params pass ``where``: ``{changed: [StageRequest...], removed: [request_id...], waiting}``."""
        return await self.next("on-stage-queue", timeout, where=where)

    async def next_stage_status(self, status: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """The StageRequest of the next ``on-stage-status`` (this user's request changed status),
        with ``status`` given the next one in that status (``"invited"``, ``"live"``, ``"done"`` ...)."""
        def has_status(params: Dict[str, Any]) -> bool:
            return status is None or params["request"]["status"] == status
        has_status.__name__ = f"status == {status!r}" if status else "any status"
        return (await self.next("on-stage-status", timeout, where=has_status))["request"]

    async def find_peer(self, role: Optional[str] = None, group: Optional[str] = None,
                        limit: Optional[int] = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        return await self.call("find-peer", _params(role=role, group=group, limit=limit), timeout)

    async def ping(self, timestamp: Any = None, timeout: float = DEFAULT_TIMEOUT) -> dict:
        return await self.call("ping", _params(timestamp=timestamp), timeout)

    # -- internals --------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for text in self._ws:
                if isinstance(text, bytes):
                    text = text.decode("utf-8", "replace")
                try:
                    message = json.loads(text)
                except ValueError:
                    message = text
                if isinstance(message, dict) and "id" in message and ("result" in message or "error" in message):
                    future = self._pending.get(message["id"])
                    if future is not None and not future.done():
                        future.set_result(message)
                        continue
                if self.on_push is not None and isinstance(message, dict) and "method" in message:
                    self.on_push(message)
                async with self._changed:
                    self._inbox.append(message)
                    self._changed.notify_all()
        except websockets.ConnectionClosed:
            pass
        finally:
            code = self._ws.close_code
            reason = getattr(self._ws, "close_reason", "") or ""
            self._closed = ConnectionClosed(1006 if code is None else code, reason)
            for future in self._pending.values():
                if not future.done():
                    future.set_exception(self._closed)
            async with self._changed:
                self._changed.notify_all()

    async def _wait_reader(self) -> None:
        try:
            await asyncio.wait_for(asyncio.shield(self._reader), 5)
        except asyncio.TimeoutError:
            self._reader.cancel()

    async def _take(self, matcher: Callable[[Any], Any], timeout: float, waited_for: str) -> Any:
        async def wait() -> Any:
            async with self._changed:
                while True:
                    for index, entry in enumerate(self._inbox):
                        value = matcher(entry)
                        if value is not None:
                            del self._inbox[index]
                            return value
                    if self._closed:
                        raise self._closed
                    await self._changed.wait()

        try:
            return await asyncio.wait_for(wait(), timeout)
        except asyncio.TimeoutError:
            raise WaitTimeout(waited_for, timeout, list(self._inbox)) from None


def _params(**pairs: Any) -> dict:
    """The params object with None values left out (absent, as the protocol reads them)."""
    return {key: value for key, value in pairs.items() if value is not None}


connect = RoomClient.connect
