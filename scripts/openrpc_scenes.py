"""The scenes docs/openrpc.json's examples are recorded from (scripts/openrpc-examples.py) and
replayed by (clients/python/tests/test_contract.py), shared so the two cannot drift.

A scene is one room with its actors (user, role; joined at its start unless `joined` is False) and
its steps in order: (actor, method, params, example name). A step whose name is None sets up what a
later one needs and is not an example. Params may hold placeholders, filled in each run:

- "{peer:ACTOR}"          the actor's peer id;
- "{token:ACTOR}"         a fresh app token of the actor (its user, role and room);
- "{id:KEY}"              a value an earlier result of the scene gave under KEY (poll_id, message_id,
                          question_id, iterator; request_id from a result's `request`);
- "{push:ACTOR:METHOD:FIELD}"  FIELD of the next METHOD push the actor gets (a role-change token).

`show` is the document's order of the 1.1/1.2 calls with a host and a viewer; `stage` holds the calls
that join, leave, remove or end (which would stop the others); `callin` the call-in queue (1.3).
"""
import asyncio

Q = [{"question": {"text": "Capital of France?", "type": "single-choice"},
      "options": [{"text": "Paris"}, {"text": "Lyon"}], "answer": {"option": 1}}]

SHOW_ACTORS = {"host": ("host-1", "host", "Ada"), "viewer": ("v-1", "viewer", "Bob")}

# The first scene: method -> (actor, params, example name), run in the document's order.
SHOW = {
    "peer-update": ("viewer", {"name": "Bob B."}, "a new display name"),
    "peer-attributes-set": ("viewer", {"set": {"seat": "12", "lang": "en"}}, "a seat and a language"),
    "broadcast": ("viewer", {"info": {"message": "hello", "type": "chat"}}, "a chat message to the room"),
    "ping": ("viewer", {"timestamp": 42}, "a ping with the caller's clock"),
    "track-add": ("host", {"track_id": "mic", "type": "audio"}, "a microphone"),
    "track-update": ("host", {"track_id": "mic", "mute": True}, "muting it"),
    "track-remove": ("host", {"track_id": "mic"}, "removing it"),
    "group-join": ("viewer", {"name": "_handraise"}, "raising one's hand"),
    "group-leave": ("viewer", {"name": "_handraise"}, "lowering it"),
    "find-peer": ("host", {"role": "viewer", "limit": 10}, "the viewers"),
    "set-metadata": ("host", {"key": "pinned", "value": {"text": "Quiz time!"}}, "pinning a note in the session store"),
    "get-metadata": ("viewer", {"key": "pinned"}, "reading one key"),
    "listen-metadata-change": ("viewer", {"keys": ["pinned"]}, "listening to one key"),
    "poll-info-set": ("host", {"title": "Capitals", "type": "quiz"}, "a quiz created"),
    "poll-questions-set": ("host", {"poll_id": "{id:poll_id}", "questions": Q}, "its question"),
    "poll-info-get": ("host", {"poll_id": "{id:poll_id}"}, "the quiz's PollInfo"),
    "poll-questions-get": ("host", {"poll_id": "{id:poll_id}"}, "its questions, with the answer (pollWrite)"),
    "poll-start": ("host", {"poll_id": "{id:poll_id}"}, "starting it"),
    "poll-response": ("viewer", {"poll_id": "{id:poll_id}", "responses": [{"question": 1, "option": 1, "duration": 1200}]},
                      "a right answer"),
    "poll-list": ("viewer", {}, "the polls the caller may read"),
    "poll-result": ("host", {"poll_id": "{id:poll_id}"}, "the counts"),
    "poll-responses": ("viewer", {"poll_id": "{id:poll_id}", "self": True}, "one's own responses"),
    "poll-leaderboard": ("host", {"poll_id": "{id:poll_id}"}, "the quiz's leaderboard"),
    "hls-start": ("host", {}, "the stream started"),
    "hls-stop": ("host", {}, "and stopped"),
    "chat-history": ("host", {"limit": 10}, "the last messages"),
    "message-pin": ("host", {"message_id": "{id:message_id}"}, "pinning a message"),
    "react": ("viewer", {"target": "stream", "type": "love", "count": 3}, "three taps on the stream"),
    "reactions-get": ("viewer", {"targets": ["stream"]}, "the stream's counts"),
    "question-add": ("viewer", {"text": "When is the next show?"}, "a question from the audience"),
    "question-vote": ("host", {"question_id": "{id:question_id}", "vote": "up"}, "an up-vote"),
    "question-list": ("host", {"order": "top"}, "the top questions"),
    "question-update": ("host", {"question_id": "{id:question_id}", "state": "answered"}, "answered"),
    "chat-state": ("host", {"slow_mode_s": 10}, "slow mode on"),
    "group-add": ("host", {"name": "stage", "peer_id": "{peer:viewer}"}, "putting a viewer in a group"),
    "group-remove": ("host", {"name": "stage", "peer_id": "{peer:viewer}"}, "taking it out again"),
    "question-delete": ("host", {"question_id": "{id:question_id}"}, "deleting a question"),
    "peer-ban": ("host", {"user_id": "troll-1", "duration_s": 600, "reason": "spam"}, "banning a user for 10 minutes"),
    "peer-unban": ("host", {"user_id": "troll-1"}, "lifting the ban"),
    "chat-ban": ("host", {"user_id": "troll-2", "duration_s": 300}, "silencing a user's chat"),
    "chat-unban": ("host", {"user_id": "troll-2"}, "ending it"),
    "report": ("viewer", {"message_id": "{id:message_id}", "reason": "spam"}, "reporting a message"),
    "recording-start": ("host", {}, "the recording started"),
    "recording-stop": ("host", {}, "and stopped"),
}

# The calls that join, leave, remove or end, and those whose example needs a state the first scene
# has left behind (a running stream for cues, a started quiz to stop).
STAGE_ACTORS = {"host": ("host-2", "host", "Cy"), "guest": ("g-2", "guest", "Dee"), "fan": ("v-2", "viewer", "Eve"),
                "fan2": ("v-3", "viewer", "Fay"), "late": ("v-4", "viewer", "Gus"),
                "fan3": ("v-6", "viewer", "Ivy"), "visitor": ("v-5", "viewer", "Hal")}
STAGE_UNJOINED = {"late", "visitor"}
STAGE = [
    ("late", "join", {"token": "{token:late}", "name": "Gus"}, "a viewer joins"),
    ("late", "leave", {}, "and leaves"),
    ("visitor", "preview", {"token": "{token:visitor}"}, "the room before joining"),
    ("host", "role-change-request", {"requested_for": "{peer:fan}", "role": "guest"}, "inviting a viewer on stage"),
    ("fan", "role-change", {"token": "{push:fan:on-role-change-request:token}"}, "accepting"),
    ("host", "role-change-request", {"requested_for": "{peer:fan}", "role": "viewer", "force": False}, None),
    ("fan", "role-change-reject", {"token": "{push:fan:on-role-change-request:token}"}, "declining a request"),
    ("guest", "track-add", {"track_id": "g-mic", "type": "audio"}, None),
    ("host", "track-update-request", {"requested_for": "{peer:guest}", "track_id": "g-mic", "mute": True},
     "muting a guest's microphone"),
    ("host", "change-track-mute-state-request", {"value": True, "roles": ["guest"], "type": "audio"},
     "muting every guest's audio"),
    ("guest", "audio-level", {"levels": [{"track_id": "g-mic", "level": 70}]}, "the guest's level"),
    ("host", "find-peer", {"role": "viewer", "limit": 1}, None),
    ("host", "peer-iter-next", {"iterator": "{id:iterator}", "limit": 1}, "the next page of viewers"),
    ("host", "hls-start", {}, None),
    ("host", "hls-timed-metadata", {"metadata_objs": [{"payload": "{\"poll\":\"p1\"}", "duration": 30}]},
     "a cue for the players"),
    ("host", "rtmp-start", {"rtmp_urls": ["rtmp://live.example.com/app/STREAM-KEY"], "record": True},
     "RTMP out with the recording"),
    ("host", "rtmp-stop", {}, "both stopped"),
    ("fan2", "broadcast", {"info": {"message": "spam spam"}}, None),
    ("fan3", "react", {"target": "{id:message_id}", "type": "like"}, None),
    ("fan3", "unreact", {"target": "{id:message_id}", "type": "like"}, "taking a reaction back"),
    ("host", "message-delete", {"message_id": "{id:message_id}"}, "deleting a message"),
    ("host", "chat-clear", {}, "clearing the chat"),
    ("host", "poll-info-set", {"title": "Capitals", "type": "quiz"}, None),
    ("host", "poll-questions-set", {"poll_id": "{id:poll_id}", "questions": Q}, None),
    ("host", "poll-start", {"poll_id": "{id:poll_id}"}, None),
    ("host", "poll-stop", {"poll_id": "{id:poll_id}"}, "stopping the quiz"),
    ("host", "poll-answer-set", {"poll_id": "{id:poll_id}", "answers": [{"question": 1, "option": 2}]},
     "correcting its answer"),
    ("fan2", "token-refresh", {"token": "{token:fan2}"}, "a fresh token"),
    ("host", "peer-leave-request", {"requested_for": "{peer:fan2}", "reason": "bye"}, "removing a viewer"),
    ("host", "end-room", {"reason": "show over"}, "the show ends"),
]

# The call-in queue (1.3, section 26): three viewers ask, the host lists, invites one (who accepts),
# declines one; one withdraws; a block and its end.
CALLIN_ACTORS = {"host": ("host-3", "host", "Kim"), "caller": ("v-7", "viewer", "Lou"),
                 "caller2": ("v-8", "viewer", "Max"), "caller3": ("v-9", "viewer", "Nia")}
CALLIN = [
    ("caller2", "stage-request", {}, None),
    ("caller", "stage-request", {"note": "A question about the tour dates"}, "asking to come on stage"),
    ("host", "stage-list", {}, "the waiting callers"),
    ("host", "stage-invite", {"request_id": "{id:request_id}"}, "inviting a caller on stage as a guest"),
    ("caller", "role-change", {"token": "{push:caller:on-role-change-request:token}"}, None),
    ("caller3", "stage-request", {"note": "hi!"}, None),
    ("host", "stage-decline", {"request_id": "{id:request_id}", "reason": "off topic"}, "declining a request"),
    ("caller2", "stage-withdraw", {}, "withdrawing one's request"),
    ("host", "stage-block", {"user_id": "v-9", "duration_s": 600}, "keeping a user out of the queue for 10 minutes"),
    ("host", "stage-unblock", {"user_id": "v-9"}, "lifting it"),
]

# Messages held for review (1.3, section 31), on a daemon whose template holds first messages: a
# viewer's first message waits, the host lists, approves it; another's is rejected.
HELD_ACTORS = {"host": ("host-4", "host", "Oli"), "fan": ("v-10", "viewer", "Pat"),
               "fan2": ("v-11", "viewer", "Quinn")}
HELD_SETTINGS = {"chat": {"hold": {"first_message": True, "links": True}}}
HELD = [
    ("fan", "broadcast", {"info": {"message": "first time here!"}}, None),
    ("host", "held-list", {}, "the messages waiting for review"),
    ("host", "message-approve", {"message_id": "{id:message_id}"}, "sending a held message to everyone"),
    ("fan2", "broadcast", {"info": {"message": "see www.example.com"}}, None),
    ("host", "message-reject", {"message_id": "{id:message_id}", "reason": "no links, please"},
     "rejecting one, with a reason"),
    ("host", "audit-list", {}, "the session's moderation acts, oldest first"),
]

ID_KEYS = ("poll_id", "message_id", "question_id", "iterator")


def scenes(order):
    """[(room, actors, unjoined, steps, settings)]: the first scene in the document's `order` of
    methods; `settings` (merged into the template's) runs the scene on a daemon of its own."""
    show = [(SHOW[m][0], m, SHOW[m][1], SHOW[m][2]) for m in order if m in SHOW]
    return [("show", SHOW_ACTORS, set(), show, None), ("stage", STAGE_ACTORS, STAGE_UNJOINED, STAGE, None),
            ("callin", CALLIN_ACTORS, set(), CALLIN, None), ("held", HELD_ACTORS, set(), HELD, HELD_SETTINGS)]


async def play(roomd, order, on_step, on_push=None):
    """Runs every scene against `roomd` (a roomd.RoomdProcess); `on_step(method, name, actor, params,
    result)` sees each step with its params filled in and the real result; `on_push(method, params,
    actor, room)`, when given, every push an actor gets, as it arrives."""
    main = roomd
    for room, actors, unjoined, steps, settings in scenes(order):
        roomd = main if settings is None else type(main)(binary=main.binary, settings=settings).start()
        try:
            await _play_scene(roomd, room, actors, unjoined, steps, on_step, on_push)
        finally:
            if roomd is not main:
                roomd.stop()


async def _play_scene(roomd, room, actors, unjoined, steps, on_step, on_push):
    clients, peers, ids = {}, {}, {}
    for actor, (user, role, name) in actors.items():
        if actor in unjoined:
            clients[actor] = await roomd.connect()
        else:
            clients[actor] = await roomd.join(room, user, role, name=name)
            peers[actor] = clients[actor].peer_id
        if on_push is not None:
            clients[actor].on_push = (lambda a: lambda m: on_push(m["method"], m.get("params"), a, room))(actor)

    async def fill(value):
        if isinstance(value, str) and value.startswith("{") and value.endswith("}") and ":" in value:
            kind, _, rest = value[1:-1].partition(":")
            if kind == "peer":
                return peers[rest]
            if kind == "token":
                user, role, _ = actors[rest]
                return roomd.token(room, user, role)
            if kind == "id":
                return ids[rest]
            if kind == "push":
                actor, method, field = rest.split(":")
                return (await clients[actor].next(method, timeout=5))[field]
        if isinstance(value, dict):
            return {k: await fill(v) for k, v in value.items()}
        if isinstance(value, list):
            return [await fill(v) for v in value]
        return value

    for actor, method, params, name in steps:
        filled = await fill(params)
        result = await clients[actor].call(method, filled)
        for key in ID_KEYS:
            if isinstance(result, dict) and result.get(key) is not None:
                ids[key] = result[key]
        if method == "broadcast":
            ids["message_id"] = result["message_id"]
        if isinstance(result, dict) and isinstance(result.get("request"), dict):
            ids["request_id"] = result["request"]["request_id"]  # stage-request, stage-invite
        if method == "join":
            peers[actor] = result["peer"]["peer_id"]
        on_step(method, name, actor, filled, result, room)
    if on_push is not None:
        await asyncio.sleep(1.2)  # the coalesced pushes of the last interval (1 s) reach the recorder
    for client in clients.values():
        if not client.closed:
            await client.close()  # after end-room they are closed already
