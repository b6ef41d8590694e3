"""Generated from docs/openrpc.json by scripts/kit-methods.py: do not edit.

The protocol calls client.py has no hand-written helper for, one coroutine each, named after
the method (``poll-start`` -> ``poll_start``): required params positional, the others keywords
(None: left out). Each returns the call's ``result`` as the server sent it
(docs/openrpc.json, docs/PROTOCOL.md) and raises like ``RoomClient.call``.
"""
from typing import Any, Optional

DEFAULT_TIMEOUT = 5.0


class ProtocolMethods:
    """Mixed into :class:`roomd.RoomClient`."""

    async def call(self, method: str, params: Optional[dict] = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        raise NotImplementedError

    async def peer_attributes_set(self, peer_id: Any = None, set: Any = None, delete: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``peer-attributes-set``: Set or delete attributes of one's own peer (updateOwnMetadata) or, with a moderating role, another's."""
        optional = {"peer_id": peer_id, "set": set, "delete": delete}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("peer-attributes-set", params, timeout)

    async def change_track_mute_state_request(self, value: Any, roles: Any = None, type: Any = None, source: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``change-track-mute-state-request``: Mute, or ask to unmute, the matching tracks of every other peer."""
        optional = {"roles": roles, "type": type, "source": source}
        params = {"value": value, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("change-track-mute-state-request", params, timeout)

    async def group_add(self, name: Any, peer_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``group-add``: Add a peer to a group (changeRole unless peer_id is one's own)."""
        params = {"name": name, "peer_id": peer_id}
        return await self.call("group-add", params, timeout)

    async def group_remove(self, name: Any, peer_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``group-remove``: Remove a peer from a group (changeRole unless peer_id is one's own)."""
        params = {"name": name, "peer_id": peer_id}
        return await self.call("group-remove", params, timeout)

    async def audio_level(self, levels: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``audio-level``: Report levels of one's own audio tracks (for active-speakers)."""
        params = {"levels": levels}
        return await self.call("audio-level", params, timeout)

    async def peer_iter_next(self, iterator: Any, limit: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``peer-iter-next``: The next page of a find-peer iterator."""
        optional = {"limit": limit}
        params = {"iterator": iterator, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("peer-iter-next", params, timeout)

    async def preview(self, token: Any, room_id: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``preview``: join's checks without joining: the room and the policy the token would get."""
        optional = {"room_id": room_id}
        params = {"token": token, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("preview", params, timeout)

    async def set_metadata(self, key: Any, value: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``set-metadata``: Set (or with null delete) a session-store key."""
        params = {"key": key, "value": value}
        return await self.call("set-metadata", params, timeout)

    async def get_metadata(self, key: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``get-metadata``: Read one session-store key, or every key with a value."""
        optional = {"key": key}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("get-metadata", params, timeout)

    async def listen_metadata_change(self, keys: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``listen-metadata-change``: Choose the session-store keys whose changes are pushed (on-metadata-change)."""
        params = {"keys": keys}
        return await self.call("listen-metadata-change", params, timeout)

    async def poll_info_set(self, title: Any, type: Any, poll_id: Any = None, duration: Any = None, anonymous: Any = None, visibility: Any = None, vote: Any = None, responses: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-info-set``: Create a poll, or replace a created poll's info."""
        optional = {"poll_id": poll_id, "duration": duration, "anonymous": anonymous, "visibility": visibility, "vote": vote, "responses": responses}
        params = {"title": title, "type": type, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("poll-info-set", params, timeout)

    async def poll_questions_set(self, poll_id: Any, questions: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-questions-set``: Replace every question of a created poll."""
        params = {"poll_id": poll_id, "questions": questions}
        return await self.call("poll-questions-set", params, timeout)

    async def poll_info_get(self, poll_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-info-get``: A poll's PollInfo."""
        params = {"poll_id": poll_id}
        return await self.call("poll-info-get", params, timeout)

    async def poll_questions_get(self, poll_id: Any, index: Any = None, count: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-questions-get``: A page of a poll's questions."""
        optional = {"index": index, "count": count}
        params = {"poll_id": poll_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("poll-questions-get", params, timeout)

    async def poll_start(self, poll_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-start``: Start a created poll."""
        params = {"poll_id": poll_id}
        return await self.call("poll-start", params, timeout)

    async def poll_stop(self, poll_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-stop``: Stop a started poll."""
        params = {"poll_id": poll_id}
        return await self.call("poll-stop", params, timeout)

    async def poll_response(self, poll_id: Any, responses: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-response``: Vote: answer (or skip) questions of a started poll."""
        params = {"poll_id": poll_id, "responses": responses}
        return await self.call("poll-response", params, timeout)

    async def poll_list(self, state: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-list``: The polls the caller may read, newest first."""
        optional = {"state": state}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("poll-list", params, timeout)

    async def poll_result(self, poll_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-result``: A poll's counts."""
        params = {"poll_id": poll_id}
        return await self.call("poll-result", params, timeout)

    async def poll_responses(self, poll_id: Any, own: Any = None, index: Any = None, count: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-responses``: A page of a poll's responses (one's own with self:true)."""
        optional = {"self": own, "index": index, "count": count}
        params = {"poll_id": poll_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("poll-responses", params, timeout)

    async def poll_leaderboard(self, poll_id: Any = None, offset: Any = None, count: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-leaderboard``: A quiz's leaderboard, or (without poll_id, 1.2) the session's."""
        optional = {"poll_id": poll_id, "offset": offset, "count": count}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("poll-leaderboard", params, timeout)

    async def poll_answer_set(self, poll_id: Any, answers: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``poll-answer-set``: Set or correct a stopped quiz's answers (pollWrite); scores are computed again."""
        params = {"poll_id": poll_id, "answers": answers}
        return await self.call("poll-answer-set", params, timeout)

    async def hls_start(self, variants: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``hls-start``: Start the room's HLS live stream (state only)."""
        optional = {"variants": variants}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("hls-start", params, timeout)

    async def hls_stop(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``hls-stop``: Stop the room's HLS live stream."""
        params = {}
        return await self.call("hls-stop", params, timeout)

    async def hls_timed_metadata(self, metadata_objs: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``hls-timed-metadata``: Add HLS timed-metadata cues."""
        params = {"metadata_objs": metadata_objs}
        return await self.call("hls-timed-metadata", params, timeout)

    async def held_list(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``held-list``: The messages held for review."""
        params = {}
        return await self.call("held-list", params, timeout)

    async def message_approve(self, message_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``message-approve``: Send a held message to everyone."""
        params = {"message_id": message_id}
        return await self.call("message-approve", params, timeout)

    async def message_reject(self, message_id: Any, reason: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``message-reject``: Drop a held message."""
        optional = {"reason": reason}
        params = {"message_id": message_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("message-reject", params, timeout)

    async def audit_list(self, after: Any = None, limit: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``audit-list``: The room session's audit log: who did which moderation act."""
        optional = {"after": after, "limit": limit}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("audit-list", params, timeout)

    async def rtmp_start(self, rtmp_urls: Any, meeting_url: Any = None, record: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``rtmp-start``: Start RTMP out (state only), optionally with the recording."""
        optional = {"meeting_url": meeting_url, "record": record}
        params = {"rtmp_urls": rtmp_urls, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("rtmp-start", params, timeout)

    async def rtmp_stop(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``rtmp-stop``: Stop RTMP out (and the recording rtmp-start with record started)."""
        params = {}
        return await self.call("rtmp-stop", params, timeout)

    async def recording_start(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``recording-start``: Start the room's recording (state only)."""
        params = {}
        return await self.call("recording-start", params, timeout)

    async def recording_stop(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``recording-stop``: Stop the room's recording."""
        params = {}
        return await self.call("recording-stop", params, timeout)

    async def token_refresh(self, token: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``token-refresh``: Swap in a new token of the same user and room."""
        params = {"token": token}
        return await self.call("token-refresh", params, timeout)

    async def stage_request(self, note: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-request``: Ask to come on stage, with a short note (1.3)."""
        optional = {"note": note}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("stage-request", params, timeout)

    async def stage_withdraw(self, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-withdraw``: Withdraw one's own waiting or invited stage request (1.3)."""
        params = {}
        return await self.call("stage-withdraw", params, timeout)

    async def stage_list(self, status: Any = None, offset: Any = None, limit: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-list``: A page of the call-in queue (moderating peers)."""
        optional = {"status": status, "offset": offset, "limit": limit}
        params = {**{key: value for key, value in optional.items() if value is not None}}
        return await self.call("stage-list", params, timeout)

    async def stage_invite(self, request_id: Any, role: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-invite``: Invite a waiting caller on stage: a polite role change (moderating with changeRole)."""
        optional = {"role": role}
        params = {"request_id": request_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("stage-invite", params, timeout)

    async def stage_decline(self, request_id: Any, reason: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-decline``: Decline a waiting or invited stage request (moderating)."""
        optional = {"reason": reason}
        params = {"request_id": request_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("stage-decline", params, timeout)

    async def stage_block(self, user_id: Any, duration_s: Any = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-block``: Keep a user out of the call-in queue (moderating)."""
        optional = {"duration_s": duration_s}
        params = {"user_id": user_id, **{key: value for key, value in optional.items() if value is not None}}
        return await self.call("stage-block", params, timeout)

    async def stage_unblock(self, user_id: Any, timeout: float = DEFAULT_TIMEOUT) -> Any:
        """``stage-unblock``: Lift a user's stage block (moderating; a user without one is fine too)."""
        params = {"user_id": user_id}
        return await self.call("stage-unblock", params, timeout)
