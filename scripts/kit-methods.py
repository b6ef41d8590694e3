#!/usr/bin/env python3
"""One API in three languages, driven by docs/openrpc.json (issue 25, item 2).

Every call of docs/openrpc.json has a helper in each kit, named after the
wire method: Python `poll_start` (snake case), roomd.js `pollStart` (camel
case), and the Swift RoomClient's typed method listed in SWIFT_NAMES below.
This script writes what follows from that list:

- clients/python/roomd/methods.py: a coroutine for every call client.py does
  not write by hand (required params positional, the others keywords);
- the block of roomd.js between the "generated" markers: the same for JS
  (required params positional, the others in an options object, camelCase);
- Sources/RoomServer/Client/roomd.d.ts: the module's types;
- docs/KITS.md: the table method -> Swift / Python / JS;
- the push names (the entries marked `x-roomd-push`), with which each kit's
  `next(method)` refuses an unknown push at once and names the close ones:
  clients/python/roomd/pushes.py, the block of roomd.js between the "push
  names" markers, and Sources/RoomProtocol/PushNames.swift.

`scripts/kit-methods.py --check` writes nothing and exits 1 when a file is
not what it would write (a stale push list too), or when a call has no Swift name (the contract test,
clients/python/tests/test_kit_api.py, runs it). After adding a method to
docs/openrpc.json: add its Swift method to RoomClient and to SWIFT_NAMES, and
run this script.
"""
import json
import keyword
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OPENRPC = ROOT / "docs" / "openrpc.json"
PY_CLIENT = ROOT / "clients" / "python" / "roomd" / "client.py"
PY_METHODS = ROOT / "clients" / "python" / "roomd" / "methods.py"
JS = ROOT / "Sources" / "RoomServer" / "Client" / "roomd.js"
DTS = ROOT / "Sources" / "RoomServer" / "Client" / "roomd.d.ts"
TABLE = ROOT / "docs" / "KITS.md"
PY_PUSHES = ROOT / "clients" / "python" / "roomd" / "pushes.py"
SWIFT_PUSHES = ROOT / "Sources" / "RoomProtocol" / "PushNames.swift"
PUSH_BEGIN = "// ---- push names, generated from docs/openrpc.json by scripts/kit-methods.py: do not edit ----"
PUSH_END = "// ---- end of push names ----"
BEGIN = "  // ---- generated from docs/openrpc.json by scripts/kit-methods.py: do not edit ----"
END = "  // ---- end of generated ----"

# The Swift RoomClient's method for each call (its base name; the test finds `public func NAME(`).
SWIFT_NAMES = {
    "join": "join", "leave": "leave", "peer-update": "updatePeer", "peer-attributes-set": "setAttributes", "broadcast": "broadcast (sendDirect, sendToRoles)",
    "ping": "ping", "track-add": "addTrack", "track-update": "updateTrack", "track-remove": "removeTrack",
    "role-change-request": "requestRoleChange (changeRoles)", "role-change": "acceptRoleChange",
    "role-change-reject": "rejectRoleChange", "track-update-request": "requestTrackUpdate",
    "change-track-mute-state-request": "changeTrackMuteState", "peer-leave-request": "removePeer",
    "end-room": "endRoom", "group-join": "joinGroup (raiseHand)", "group-leave": "leaveGroup (lowerHand)",
    "group-add": "addToGroup", "group-remove": "removeFromGroup", "audio-level": "reportAudioLevels",
    "find-peer": "findPeers", "peer-iter-next": "nextPeers", "preview": "preview", "set-metadata": "setMetadata",
    "get-metadata": "metadata (allMetadata)", "listen-metadata-change": "listenMetadata",
    "poll-info-set": "setPollInfo", "poll-questions-set": "setPollQuestions", "poll-info-get": "pollInfo",
    "poll-questions-get": "pollQuestions", "poll-start": "startPoll", "poll-stop": "stopPoll",
    "poll-response": "respondToPoll", "poll-list": "polls", "poll-result": "pollResult",
    "poll-responses": "pollResponses", "poll-leaderboard": "pollLeaderboard (sessionLeaderboard)",
    "poll-answer-set": "setPollAnswers", "hls-start": "startHLSStreaming", "hls-stop": "stopHLSStreaming",
    "hls-timed-metadata": "sendHLSTimedMetadata", "chat-history": "chatHistory", "message-delete": "deleteMessage",
    "chat-clear": "clearChat", "message-pin": "pinMessage", "react": "react", "unreact": "unreact",
    "reactions-get": "reactions", "question-add": "askQuestion", "question-vote": "voteQuestion",
    "question-list": "questions", "question-update": "updateQuestion", "question-delete": "deleteQuestion",
    "stage-request": "askToJoinStage", "stage-withdraw": "withdrawStageRequest", "stage-list": "stageQueue",
    "stage-invite": "invite (inviteToStage)", "stage-decline": "declineStageRequest", "stage-block": "blockFromStage",
    "stage-unblock": "unblockFromStage",
    "peer-ban": "ban", "peer-unban": "unban", "chat-ban": "chatBan", "chat-unban": "chatUnban",
    "held-list": "heldMessages", "message-approve": "approveMessage", "message-reject": "rejectMessage",
    "audit-list": "auditLog",
    "chat-state": "setChatState", "report": "report", "report-resolve": "resolveReport", "rtmp-start": "startRTMP", "rtmp-stop": "stopRTMP",
    "recording-start": "startRecording", "recording-stop": "stopRecording", "token-refresh": "refreshToken",
}


def calls():
    document = json.loads(OPENRPC.read_text())
    return [m for m in document["methods"] if not m.get("x-roomd-push")]


def pushes():
    document = json.loads(OPENRPC.read_text())
    return [m["name"] for m in document["methods"] if m.get("x-roomd-push")]


def python_pushes(names):
    lines = ['"""Generated from docs/openrpc.json by scripts/kit-methods.py: do not edit.',
             "",
             "Every push roomd sends (the methods marked ``x-roomd-push``): ``RoomClient.next`` refuses any",
             "other name at once.",
             '"""',
             "PUSHES = frozenset({"]
    lines += [f'    "{name}",' for name in sorted(names)]
    lines.append("})")
    return "\n".join(lines) + "\n"


def js_pushes(names, source):
    lines = [PUSH_BEGIN,
             "// Every push roomd sends (the methods marked x-roomd-push): next(method) refuses any other name.",
             "export const PUSH_NAMES = Object.freeze(["]
    lines += [f'  "{name}",' for name in sorted(names)]
    lines += ["]);", PUSH_END]
    block = "\n".join(lines)
    if PUSH_BEGIN in source:
        return source[:source.index(PUSH_BEGIN)] + block + source[source.index(PUSH_END) + len(PUSH_END):]
    anchor = "/** A JSON-RPC error answer"
    return source.replace(anchor, block + "\n\n" + anchor, 1)


def swift_pushes(names):
    lines = ["// Generated from docs/openrpc.json by scripts/kit-methods.py: do not edit.",
             "",
             "/// Every push roomd sends (the methods of docs/openrpc.json marked",
             "/// `x-roomd-push`), shared by the server and the kits: the Swift kit's",
             "/// `next(_:)` refuses any other name at once, and test mode's push",
             "/// faults (PROTOCOL.md section 33) refuse to wait for one.",
             "public enum PushNames {",
             "    public static let all: Set<String> = ["]
    lines += [f'        "{name}",' for name in sorted(names)]
    lines += ["    ]", "}"]
    return "\n".join(lines) + "\n"


def snake(method):
    return method.replace("-", "_")


def camel(name):
    name = RENAMED.get(name, name)
    parts = re.split(r"[-_]", name)
    name = parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])
    return name + "_" if name in JS_RESERVED else name  # as py_param does for Python's keywords


# JavaScript's reserved words a wire param may be named after (`peer-attributes-set`'s `delete`).
JS_RESERVED = {"delete", "new", "default", "class", "function", "in", "var", "this", "void", "with", "switch",
               "case", "return", "typeof", "instanceof", "export", "import", "extends", "super", "const",
               "let", "static", "yield", "await", "enum", "null", "true", "false", "if", "else", "for", "while",
               "do", "break", "continue", "throw", "try", "catch", "finally", "debugger"}


# Params whose wire name cannot (or should not) be an argument's: `self` is Swift's `own:` too.
RENAMED = {"self": "own"}


def py_param(name):
    name = RENAMED.get(name, name)
    return name + "_" if keyword.iskeyword(name) else name


def python_methods(methods):
    handwritten = set(re.findall(r"^    async def ([a-z_]+)\(", PY_CLIENT.read_text(), re.M))
    out = ['"""Generated from docs/openrpc.json by scripts/kit-methods.py: do not edit.',
           "",
           "The protocol calls client.py has no hand-written helper for, one coroutine each, named after",
           "the method (``poll-start`` -> ``poll_start``): required params positional, the others keywords",
           "(None: left out). Each returns the call's ``result`` as the server sent it",
           "(docs/openrpc.json, docs/PROTOCOL.md) and raises like ``RoomClient.call``.",
           '"""',
           "from typing import Any, Optional",
           "",
           "DEFAULT_TIMEOUT = 5.0",
           "",
           "",
           "class ProtocolMethods:",
           '    """Mixed into :class:`roomd.RoomClient`."""',
           "",
           "    async def call(self, method: str, params: Optional[dict] = None, timeout: float = DEFAULT_TIMEOUT) -> Any:",
           "        raise NotImplementedError",
           ""]
    for method in methods:
        name = snake(method["name"])
        if name in handwritten:
            continue
        params = method.get("params", [])
        required = [p["name"] for p in params if p.get("required")]
        optional = [p["name"] for p in params if not p.get("required")]
        signature = ["self"] + [py_param(p) + ": Any" for p in required]
        signature += [py_param(p) + ": Any = None" for p in optional]
        signature.append("timeout: float = DEFAULT_TIMEOUT")
        out.append(f"    async def {name}({', '.join(signature)}) -> Any:")
        out.append(f'        """``{method["name"]}``: {method.get("summary", "")}."""')
        sent = ", ".join(f'"{p}": {py_param(p)}' for p in required)  # always sent, null too
        maybe = ", ".join(f'"{p}": {py_param(p)}' for p in optional)  # left out when None
        if optional:
            out.append(f"        optional = {{{maybe}}}")
            out.append(f"        params = {{{sent + ', ' if sent else ''}"
                       "**{key: value for key, value in optional.items() if value is not None}}")
        else:
            out.append(f"        params = {{{sent}}}")
        out.append(f'        return await self.call("{method["name"]}", params, timeout)')
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def js_block(methods, source):
    outside = source
    if BEGIN in source:
        outside = source[:source.index(BEGIN)] + source[source.index(END) + len(END):]
    handwritten = set(re.findall(r"^  (?:async )?([a-zA-Z]+)\(", outside, re.M))
    lines = [BEGIN,
             "  // Calls without a hand-written helper: required params positional, the others in an options",
             "  // object (camelCase); each resolves with the call's result as the server sent it."]
    for method in methods:
        name = camel(method["name"])
        if name in handwritten:
            continue
        params = method.get("params", [])
        required = [p["name"] for p in params if p.get("required")]
        optional = [p["name"] for p in params if not p.get("required")]
        args = [camel(p) for p in required] + (["{ " + ", ".join(camel(p) for p in optional) + " } = {}"]
                                               if optional else [])
        def pair(p):
            return p if camel(p) == p else f"{p}: {camel(p)}"
        members = [pair(p) for p in required]  # always sent, null too
        if optional:
            members.append("...params({ " + ", ".join(pair(p) for p in optional) + " })")  # left out when null
        body = "{ " + ", ".join(members) + " }" if members else "{}"
        lines.append(f'  /** `{method["name"]}`: {method.get("summary", "")}. */')
        lines.append(f'  {name}({", ".join(args)}) {{ return this.call("{method["name"]}", {body}); }}')
    lines.append(END)
    block = "\n".join(lines)
    if BEGIN in source:
        return source[:source.index(BEGIN)] + block + source[source.index(END) + len(END):]
    anchor = "  // ---- internals"
    return source.replace(anchor, block + "\n\n" + anchor, 1)


# Hand-written roomd.js helpers whose positional param may be left out (the JS has no default to tell).
OPTIONAL_POSITIONAL = {("leave", "reason"), ("ping", "timestamp"), ("peerLeaveRequest", "reason")}


def dts(source):
    """roomd.d.ts: the core by hand (below), every helper from its JS signature."""
    helpers = source[source.index("// ---- typed helpers"):source.index("// ---- internals")]
    lines = []
    for match in re.finditer(r"^  (?:async )?([a-zA-Z]+)\((.*?)\) *\{", helpers, re.M):
        name, args = match.group(1), match.group(2)
        parts, depth, current = [], 0, ""
        for ch in args:
            depth += ch in "{[(" and 1 or 0
            depth -= ch in "}])" and 1 or 0
            if ch == "," and depth == 0:
                parts.append(current.strip())
                current = ""
            else:
                current += ch
        if current.strip():
            parts.append(current.strip())
        params = []
        for part in parts:
            if part.startswith("{"):
                keys = [k.strip().split("=")[0].strip() for k in part[1:part.index("}")].split(",") if k.strip()]
                optional = "= {}" in part
                params.append("options" + ("?" if optional else "") + ": { " + "; ".join(k + "?: any" for k in keys)
                              + " }")
            else:
                param = part.split("=")[0].strip()
                optional = "=" in part or (name, param) in OPTIONAL_POSITIONAL
                params.append(param + ("?" if optional else "") + ": any")
        lines.append(f"  {name}({', '.join(params)}): Promise<any>;")
    return DTS_HEAD + "\n".join(lines) + "\n}\n\nexport default RoomClient;\n"


DTS_HEAD = """\
// Generated by scripts/kit-methods.py from roomd.js and docs/openrpc.json: do not edit.
// Types of roomd.js, the roomd browser client (ES module; served at /client/roomd.js).

/** A push: a JSON-RPC notification from the server. */
export interface Push { jsonrpc: "2.0"; method: string; params?: Record<string, any>; }

/** The hand-raise group, `"_handraise"`. */
export const HAND_RAISE_GROUP: string;

/** Every push roomd sends (docs/openrpc.json's methods marked x-roomd-push). */
export const PUSH_NAMES: readonly string[];

/** next(method) with a method that is not a push: `push` is the name, `suggestions` the close ones (at most 3). */
export class UnknownPushError extends Error {
  constructor(push: string, suggestions?: string[]);
  push: string;
  suggestions: string[];
}

/** The push names close to `name` (edit distance <= 3, or one ends or starts the other), closest first, at most 3. */
export function closePushes(name: string): string[];

/** A JSON-RPC error answer: `code` is the protocol code (e.g. 40300, -32602). */
export class RoomError extends Error {
  constructor(code: number, message: string, data?: any, method?: string);
  code: number;
  rpcMessage: string;
  data: any;
  method?: string;
}

/** The connection ended: `code` is the close code (1006 when it dropped without one). */
export class ClosedError extends Error {
  constructor(code: number, reason?: string);
  code: number;
  reason: string;
}

/** A wait found nothing in time: what it waited for, for how long, and what was queued instead. */
export class TimeoutError extends Error {
  constructor(what: string, timeoutMs?: number, inbox?: any[]);
  waitedFor: string;
  timeoutMs?: number;
  queued: string[];
  queuedCount: number;
}

/** One inbox entry in a line: `method {params excerpt}`. */
export function pushSummary(entry: any): string;

/** The one predicate contract of the kits: a push's params in, true for the one wanted. */
export type PushPredicate = (params: Record<string, any>) => unknown;

export interface NextOptions { timeout?: number; where?: PushPredicate; description?: string; }

/** A feed answer other than 200/304 (PROTOCOL.md section 24): the HTTP `status` and roomd's `code`. */
export class FeedError extends Error {
  constructor(status: number, code: number, message: string);
  status: number;
  code: number;
}

/** A span of the audience feed: `{room_id, from, to, stream, peer_count, chat, deleted, pinned, reactions, polls,
 * poll_stats, questions: {changed, removed}, chat_state, ended}`. */
export type FeedSpan = Record<string, any>;

/** Polls the audience feed every `interval` seconds (3) on the whole-second 3-s grid; `for await` yields the spans
 * and stops after the one that says `ended`. */
export class FeedReader implements AsyncIterable<FeedSpan> {
  constructor(baseURL: string, room: string, options?: {
    token?: string; interval?: number; clock?: () => number; sleep?: (seconds: number) => Promise<void>;
    fetch?: (url: string, init?: any) => Promise<any>;
  });
  baseURL: string;
  room: string;
  token?: string;
  interval: number;
  lastTo: number | null;
  ended: boolean;
  spansDue(): [number, number][];
  fetchSpan(from: number, to: number): Promise<FeedSpan>;
  poll(): Promise<FeedSpan[]>;
  [Symbol.asyncIterator](): AsyncIterator<FeedSpan>;
}

/** A /v2/test/ route answered other than 200. */
export class TestModeError extends Error {
  constructor(route: string, status: number, code: number, message: string);
  status: number;
  code: number;
}

/** roomd's test mode (sections 25 and 33) over /v2/test/* with a management token. */
export class RoomdTestMode {
  constructor(baseURL: string, options?: { token?: string; fetch?: (url: string, init?: any) => Promise<any> });
  baseURL: string;
  token?: string;
  advance(ms: number): Promise<number>;
  clock(): Promise<number>;
  fault(action: "close" | "stall" | "delay" | "drop",
        options?: { peerId?: string; userId?: string; code?: number; ms?: number; count?: number }): Promise<string[]>;
  failNext(method: string, code: number, options?: { message?: string; count?: number; peerId?: string }): Promise<void>;
  dropNext(push: string, options?: { count?: number; peerId?: string }): Promise<void>;
  delayNext(push: string, ms: number, options?: { count?: number; peerId?: string }): Promise<void>;
  faults(): Promise<Record<string, any>[]>;
  clearFaults(): Promise<void>;
  addAudience(room: string, count: number,
              options?: { role?: string; seed?: number; namePrefix?: string }): Promise<{ peer_ids: string[]; count: number }>;
  audienceAct(room: string, action: string, count: number, params?: Record<string, any>):
    Promise<{ done: number; errors: Record<string, number>; messages: Record<string, string> }>;
  removeAudience(room: string): Promise<number>;
  journal(room: string): Promise<Record<string, any>[]>;
  route(method: string, route: string, body?: any, json?: boolean): Promise<any>;
}

export class RoomClient {
  static connect(url: string, options?: { timeout?: number; WebSocket?: any; inboxLimit?: number }): Promise<RoomClient>;
  constructor(ws: any, inboxLimit?: number);
  ws: any;
  peerId: string | null;
  inbox: any[];
  inboxLimit: number;
  closed: ClosedError | null;
  call(method: string, params?: Record<string, any> | null, options?: { timeout?: number }): Promise<any>;
  notify(method: string, params?: Record<string, any> | null): void;
  on(method: string, handler: (params: Record<string, any>, push: Push) => void): () => void;
  next(method?: string | null, options?: NextOptions): Promise<Record<string, any>>;
  /** @deprecated the whole-push predicate: use next(method, {where}). */
  next(predicate: (push: Push) => unknown, options?: { timeout?: number; description?: string }): Promise<any>;
  nextMessage(options?: { timeout?: number }): Promise<any>;
  drain(): any[];
  expectSilence(ms: number): Promise<any[]>;
  closeCode(): Promise<number>;
  close(code?: number, reason?: string): Promise<number>;
  /** Answers every on-token-expiring with token-refresh and a token from `provider`; returns a stop function. */
  refreshTokens(provider: () => string | Promise<string>): () => void;
"""


def table(methods, py_source, js_source):
    rows = ["# One API in three languages",
            "",
            "Every call of [docs/openrpc.json](openrpc.json) and its helper in each kit. Python and roomd.js",
            "name a helper after its method (`poll-start`: `poll_start`, `pollStart`); the Swift",
            "RoomClient's typed methods read as Swift (in brackets: other methods for the same call).",
            "Generated by `scripts/kit-methods.py`; `clients/python/tests/test_kit_api.py` fails when a call",
            "of docs/openrpc.json has no helper in a kit, or when this table is stale.",
            "",
            "Waiting for pushes is the same in the three: a method name and a predicate over the push's",
            "params (Swift `next(_:where:)`, Python `next(method, where=…)`, roomd.js",
            "`next(method, {where})`); a wait that times out says what it waited for and what was queued.",
            "A name that is not a push of docs/openrpc.json (`x-roomd-push`) fails at once, naming the close",
            "ones (edit distance at most 3, or one name ends or starts the other; at most 3): Swift",
            "`RoomClientError.unknownPush`, Python `UnknownPush` (a `ValueError`), roomd.js `UnknownPushError`.",
            "The push names are generated too: `PushNames.all` (Sources/RoomProtocol/PushNames.swift, `RoomClient.pushNames`),",
            "`roomd.PUSHES` (clients/python/roomd/pushes.py), roomd.js `PUSH_NAMES`; the contract test fails",
            "when one is stale.",
            "",
            "| method | Swift (RoomClient) | Python (roomd.RoomClient) | JS (roomd.js RoomClient) |",
            "|---|---|---|---|"]
    for method in methods:
        name = method["name"]
        swift = SWIFT_NAMES.get(name, "—")
        rows.append(f"| `{name}` | `{swift}` | `{snake(name)}` | `{camel(name)}` |")
    rows += ["",
             "## Test mode (PROTOCOL.md sections 25 and 33)",
             "",
             "A harness drives `/v2/test/*` through the same helpers in the three: Swift `RoomdProcess`",
             "(RoomdTesting), Python `RoomdProcess` (`roomd_factory(clock=\"manual\")`), roomd.js `RoomdTestMode`",
             "(a management token; same-origin pages served by roomd, or Node). `test_kit_api.py` checks that",
             "each kit has each of them.",
             "",
             "| route | Swift (RoomdProcess) | Python (roomd.RoomdProcess) | JS (roomd.js RoomdTestMode) |",
             "|---|---|---|---|"]
    for route, swift, python, js in TEST_MODE_HELPERS:
        rows.append(f"| {route} | `{swift}` | `{python}` | `{js}` |")
    rows += HOOK_RECIPE
    return "\n".join(rows) + "\n"


# The app's hook in the three harnesses (PROTOCOL.md section 30).
HOOK_RECIPE = [
    "",
    "## Testing the app's hook (PROTOCOL.md section 30)",
    "",
    "A hook server whose answer the test sets per call, verifying each request's signature as a real",
    "backend would: Swift `HookServer` (RoomdTesting; `RoomdProcess.start(hooks: server)`), Python",
    "`roomd.hooks.HookServer` (the `hook_server` fixture; `roomd_factory(hooks=hook_server)`). The",
    "answers are the same in both: allow, deny (a reason), rewrite (`name`/`role`/`attributes`, `info`,",
    "`text`, `note`), shadow, a status (500: a failed hook), a raw body (garbage, oversize), silence (no",
    "answer: `timeout_ms` ends it), and a delay before any of them. Queue the next answers",
    "(`answer(.deny(\"no\"))`, `answer(deny(\"no\"))`), or decide from each verified request",
    "(`decide { event in … }`, `server.decide = lambda event: …`); `next(\"message\")` waits for the",
    "next request of a type; Swift's `connections` counts the connections roomd opened to it (roomd keeps",
    "them alive and closes one idle for 4 s). Test mode's `failHooks`/`fail_hooks`/`failHooks` fails the",
    "next calls without reaching the hook.",
    "",
    "The browser harness (roomd.js) has no server of its own: a page cannot listen. Run the hook in the",
    "harness's Node process (Playwright's or the test runner's) and point the template's",
    "`settings.hooks.url` at it; verify with the same HMAC as webhooks:",
    "",
    "```js",
    "import { createServer } from \"node:http\";",
    "import { createHmac, timingSafeEqual } from \"node:crypto\";",
    "",
    "const answers = [];              // the test pushes the next answers: {allow:false, reason:\"no\"}, …",
    "const requests = [];",
    "const hook = createServer((req, res) => {",
    "  const chunks = [];",
    "  req.on(\"data\", (c) => chunks.push(c)).on(\"end\", () => {",
    "    const body = Buffer.concat(chunks);",
    "    const t = req.headers[\"x-roomd-timestamp\"];",
    "    const want = \"sha256=\" + createHmac(\"sha256\", SECRET).update(`${t}.`).update(body).digest(\"hex\");",
    "    const got = String(req.headers[\"x-roomd-signature\"] ?? \"\");",
    "    if (got.length !== want.length || !timingSafeEqual(Buffer.from(got), Buffer.from(want))) {",
    "      res.writeHead(401).end();  // roomd: a failed hook",
    "      return;",
    "    }",
    "    requests.push(JSON.parse(body));",
    "    res.writeHead(200, { \"content-type\": \"application/json\" })",
    "      .end(JSON.stringify(answers.shift() ?? { allow: true }));",
    "  });",
    "}).listen(0, \"127.0.0.1\");",
    "// settings.hooks.url = `http://127.0.0.1:${hook.address().port}/hook`",
    "```",
    "",
    "A delay is a `setTimeout` before `end`; a failed hook is a 500, or `RoomdTestMode.failHooks(n)`.",
]


# Test mode's helpers in the three kits: (route, Swift, Python, JS).
TEST_MODE_HELPERS = [
    ("`POST /v2/test/clock {advance_ms}`", "advance", "advance", "advance"),
    ("`GET /v2/test/clock`", "clockMillis", "clock", "clock"),
    ("`POST /v2/test/faults {peer_id or user_id, action}`", "inject", "fault", "fault"),
    ("`POST /v2/test/faults {method, error}`", "failNext", "fail_next", "failNext"),
    ("`POST /v2/test/faults {push, action:\"drop\"}`", "dropNext", "drop_next", "dropNext"),
    ("`POST /v2/test/faults {push, action:\"delay\"}`", "delayNext", "delay_next", "delayNext"),
    ("`POST /v2/test/faults {hooks:{fail_next, status}}`", "failHooks", "fail_hooks", "failHooks"),
    ("`GET /v2/test/faults`", "faults", "faults", "faults"),
    ("`DELETE /v2/test/faults`", "clearFaults", "clear_faults", "clearFaults"),
    ("`POST /v2/test/audience`", "addAudience", "add_audience", "addAudience"),
    ("`POST /v2/test/audience/act`", "audienceAct", "audience_act", "audienceAct"),
    ("`DELETE /v2/test/audience`", "removeAudience", "remove_audience", "removeAudience"),
    ("`GET /v2/test/journal`", "journal", "journal", "journal"),
]


def main():
    check = "--check" in sys.argv
    methods = calls()
    missing_swift = [m["name"] for m in methods if m["name"] not in SWIFT_NAMES]
    js_source = js_pushes(pushes(), js_block(methods, JS.read_text()))
    outputs = {PY_METHODS: python_methods(methods), JS: js_source, DTS: dts(js_source),
               TABLE: table(methods, PY_CLIENT.read_text(), js_source),
               PY_PUSHES: python_pushes(pushes()), SWIFT_PUSHES: swift_pushes(pushes())}
    stale = [str(path.relative_to(ROOT)) for path, text in outputs.items()
             if not path.exists() or path.read_text() != text]
    if check:
        problems = []
        if missing_swift:
            problems.append("no Swift name for " + ", ".join(missing_swift)
                            + ": add a typed method to RoomClient and to SWIFT_NAMES in scripts/kit-methods.py")
        if stale:
            problems.append("stale: " + ", ".join(stale) + ": run scripts/kit-methods.py")
        print("\n".join(problems))
        sys.exit(1 if problems else 0)
    for path, text in outputs.items():
        path.write_text(text)
    if missing_swift:
        print("no Swift name for " + ", ".join(missing_swift), file=sys.stderr)


if __name__ == "__main__":
    main()
