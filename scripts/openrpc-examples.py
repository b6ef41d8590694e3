#!/usr/bin/env python3
"""Records the OpenRPC examples of docs/openrpc.json from a real daemon: one call per method of CASES,
made in the document's order by a host (Ada) and a viewer (Bob) of one room, ids of earlier results
filled in ({poll_id}, ...). test_contract.py replays them the same way and checks each real answer
has the recorded shape. Rewrites every method's "examples".

    ROOMD_BIN=.build/debug/roomd .venv-test/bin/python scripts/openrpc-examples.py docs/openrpc.json
"""
import asyncio, json, sys
from roomd import RoomdProcess

Q = [{"question": {"text": "Capital of France?", "type": "single-choice"},
      "options": [{"text": "Paris"}, {"text": "Lyon"}], "answer": {"option": 1}}]
CASES = {  # method: (caller, params with {placeholders}, example name)
    "peer-update": ("viewer", {"name": "Bob B."}, "a new display name"),
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
    "poll-questions-set": ("host", {"poll_id": "{poll_id}", "questions": Q}, "its question"),
    "poll-info-get": ("host", {"poll_id": "{poll_id}"}, "the quiz's PollInfo"),
    "poll-questions-get": ("host", {"poll_id": "{poll_id}"}, "its questions, with the answer (pollWrite)"),
    "poll-start": ("host", {"poll_id": "{poll_id}"}, "starting it"),
    "poll-response": ("viewer", {"poll_id": "{poll_id}", "responses": [{"question": 1, "option": 1, "duration": 1200}]},
                      "a right answer"),
    "poll-list": ("viewer", {}, "the polls the caller may read"),
    "poll-result": ("host", {"poll_id": "{poll_id}"}, "the counts"),
    "poll-responses": ("viewer", {"poll_id": "{poll_id}", "self": True}, "one's own responses"),
    "poll-leaderboard": ("host", {"poll_id": "{poll_id}"}, "the quiz's leaderboard"),
    "hls-start": ("host", {}, "the stream started"),
    "hls-stop": ("host", {}, "and stopped"),
    "chat-history": ("host", {"limit": 10}, "the last messages"),
    "message-pin": ("host", {"message_id": "{message_id}"}, "pinning a message"),
    "react": ("viewer", {"target": "stream", "type": "love", "count": 3}, "three taps on the stream"),
    "reactions-get": ("viewer", {"targets": ["stream"]}, "the stream's counts"),
    "question-add": ("viewer", {"text": "When is the next show?"}, "a question from the audience"),
    "question-vote": ("host", {"question_id": "{question_id}", "vote": "up"}, "an up-vote"),
    "question-list": ("host", {"order": "top"}, "the top questions"),
    "question-update": ("host", {"question_id": "{question_id}", "state": "answered"}, "answered"),
    "chat-state": ("host", {"slow_mode_s": 10}, "slow mode on"),
    "group-add": ("host", {"name": "stage", "peer_id": "{viewer_id}"}, "putting a viewer in a group"),
    "group-remove": ("host", {"name": "stage", "peer_id": "{viewer_id}"}, "taking it out again"),
    "question-delete": ("host", {"question_id": "{question_id}"}, "deleting a question"),
    "peer-ban": ("host", {"user_id": "troll-1", "duration_s": 600, "reason": "spam"}, "banning a user for 10 minutes"),
    "peer-unban": ("host", {"user_id": "troll-1"}, "lifting the ban"),
    "chat-ban": ("host", {"user_id": "troll-2", "duration_s": 300}, "silencing a user's chat"),
    "chat-unban": ("host", {"user_id": "troll-2"}, "ending it"),
    "report": ("viewer", {"message_id": "{message_id}", "reason": "spam"}, "reporting a message"),
    "recording-start": ("host", {}, "the recording started"),
    "recording-stop": ("host", {}, "and stopped"),
}

def fill(value, ids):
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in ids:
        return ids[value[1:-1]]
    if isinstance(value, dict):
        return {k: fill(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(v, ids) for v in value]
    return value

async def main(roomd, order):
    who = {"host": await roomd.join("show", "host-1", "host", name="Ada"),
           "viewer": await roomd.join("show", "v-1", "viewer", name="Bob")}
    ids, out = {"viewer_id": who["viewer"].peer_id}, {}
    for method in order:
        if method not in CASES:
            continue
        caller, params, name = CASES[method]
        params = fill(params, ids)
        result = await who[caller].call(method, params)
        for key in ("poll_id", "message_id", "question_id"):
            if isinstance(result, dict) and key in result and key not in ids:
                ids[key] = result[key]
        out[method] = {"name": name, "params": [{"name": k, "value": v} for k, v in params.items()],
                       "result": {"name": "result", "value": result}, "x-roomd-caller": caller}
    return out

path = sys.argv[1]
document = json.load(open(path))
order = [m["name"] for m in document["methods"] if not m.get("x-roomd-push")]
with RoomdProcess() as roomd:
    examples = asyncio.run(main(roomd, order))
for method in document["methods"]:
    method.pop("examples", None)
    if method["name"] in examples:
        method["examples"] = [examples[method["name"]]]
open(path, "w").write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
print(len(examples), "examples")
