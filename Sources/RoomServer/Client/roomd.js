// roomd.js — the roomd client for browsers (and Node with a WebSocket), one ES module, no build step.
// roomd serves this file at GET /client/roomd.js; it is also the file in the repository,
// Sources/RoomServer/Client/roomd.js (copy it into your app if you prefer).
//
//   import { RoomClient } from "/client/roomd.js";
//   const client = await RoomClient.connect("ws://127.0.0.1:7880/ws");
//   const joined = await client.join({ token });              // {peer, room, policy, peers, resumed}
//   const push = await client.next("on-peer-join");          // its params; other pushes stay queued
//   const hand = await client.next("on-peer-update", { where: (p) => p.peer.groups.includes("_handraise") });
//   client.on("on-broadcast", params => console.log(params.info.message));
//
// Calls return the JSON-RPC `result` or reject with a RoomError carrying the protocol
// `code`, `message` and `data` (PROTOCOL.md section 8). Every push is queued in arrival
// order (the inbox) and also handed to the listeners registered with `on`.

export const HAND_RAISE_GROUP = "_handraise";
const DEFAULT_TIMEOUT_MS = 5000;

/** next(method) with a method that is not a push (PUSH_NAMES): names the close ones, at most 3. */
export class UnknownPushError extends Error {
  constructor(push, suggestions = []) {
    super(`unknown push "${push}"` + (suggestions.length ? `: did you mean ${suggestions.join(", ")}?`
                                                         : " (docs/openrpc.json lists every push)"));
    this.name = "UnknownPushError";
    this.push = push;
    this.suggestions = suggestions;
  }
}

function editDistance(a, b) {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    row = next;
  }
  return row[b.length];
}

/** The push names close to `name` (edit distance <= 3, or one ends or starts the other), closest first, at most 3. */
export function closePushes(name) {
  const close = [];
  for (const push of PUSH_NAMES) {
    const distance = editDistance(name, push);
    const affix = push.startsWith(name) || name.startsWith(push) || push.endsWith(name) || name.endsWith(push);
    if (distance <= 3 || affix) close.push([affix ? 0 : 1, distance, push]);
  }
  close.sort((a, b) => a[0] - b[0] || a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0));
  return close.slice(0, 3).map((entry) => entry[2]);
}

// ---- push names, generated from docs/openrpc.json by scripts/kit-methods.py: do not edit ----
// Every push roomd sends (the methods marked x-roomd-push): next(method) refuses any other name.
export const PUSH_NAMES = Object.freeze([
  "active-speakers",
  "on-broadcast",
  "on-change-track-mute-state-request",
  "on-chat-clear",
  "on-chat-state",
  "on-error",
  "on-hls-timed-metadata",
  "on-hls-update",
  "on-message-delete",
  "on-message-held",
  "on-message-pin",
  "on-message-review",
  "on-metadata-change",
  "on-peer-join",
  "on-peer-leave",
  "on-peer-leave-request",
  "on-peer-update",
  "on-policy-change",
  "on-poll-answer",
  "on-poll-start",
  "on-poll-stats",
  "on-poll-stop",
  "on-questions",
  "on-reactions",
  "on-record-update",
  "on-report",
  "on-report-update",
  "on-role-change-rejected",
  "on-role-change-request",
  "on-rtmp-update",
  "on-stage-queue",
  "on-stage-status",
  "on-token-expiring",
  "on-track-add",
  "on-track-remove",
  "on-track-update",
  "on-track-update-request",
  "room-state",
]);
// ---- end of push names ----

/** A JSON-RPC error answer: `code` is the protocol code (e.g. 40300, -32602). */
export class RoomError extends Error {
  constructor(code, message, data, method) {
    super(`rpc error ${code}: ${message}`);
    this.name = "RoomError";
    this.code = code;
    this.rpcMessage = message;
    this.data = data;
    this.method = method;
  }
}

/** The connection ended: `code` is the close code (1006 when it dropped without one). */
export class ClosedError extends Error {
  constructor(code, reason) {
    super(`closed (${code}${reason ? " " + reason : ""})`);
    this.name = "ClosedError";
    this.code = code;
    this.reason = reason;
  }
}

/** One inbox entry in a line: a push as `method {params excerpt}` (80 characters at most). */
export function pushSummary(entry) {
  const excerpt = (value) => {
    const text = JSON.stringify(value) ?? String(value);
    return text.length <= 80 ? text : text.slice(0, 79) + "…";
  };
  if (entry && typeof entry === "object" && typeof entry.method === "string") return `${entry.method} ${excerpt(entry.params ?? {})}`;
  if (entry && typeof entry === "object" && "id" in entry) return `response id=${entry.id} ${excerpt(entry)}`;
  return (typeof entry === "string" ? "text " : "") + excerpt(entry);
}

/**
 * A wait (`next`, `nextMessage`, a call's answer) found nothing in time. The message says what was
 * awaited (`waitedFor`), for how long (`timeoutMs`) and what was queued instead (`queued`: at most 10
 * entries as `pushSummary` gives them; `queuedCount` how many there were).
 */
export class TimeoutError extends Error {
  constructor(what, timeoutMs, inbox = []) {
    const queued = inbox.slice(0, 10).map(pushSummary);
    let text = `timed out${timeoutMs === undefined ? "" : ` after ${timeoutMs} ms`} waiting for ${what}; `;
    text += inbox.length === 0 ? "nothing queued"
      : `${inbox.length} ${inbox.length === 1 ? "entry" : "entries"} queued: ${queued.join(", ")}`
        + (inbox.length > 10 ? `, … ${inbox.length - 10} more` : "");
    super(text);
    this.name = "TimeoutError";
    this.waitedFor = what;
    this.timeoutMs = timeoutMs;
    this.queued = queued;
    this.queuedCount = inbox.length;
  }
}

export class RoomClient {
  /**
   * Connects to `ws://host:port/ws` (roomd's listening line).
   * Options: `timeout` (ms, default 5000), `WebSocket` (a constructor; default the global one —
   * Node 22+ has it, Node 20 with --experimental-websocket), `inboxLimit` (default 10000 entries,
   * the oldest are dropped beyond it).
   */
  static connect(url, { timeout = DEFAULT_TIMEOUT_MS, WebSocket: Socket = globalThis.WebSocket, inboxLimit = 10000 } = {}) {
    if (!Socket) return Promise.reject(new Error("no WebSocket implementation: use Node 22+, or Node 20 with --experimental-websocket, or pass {WebSocket}"));
    return new Promise((resolve, reject) => {
      const ws = new Socket(url);
      const timer = setTimeout(() => { ws.close(); reject(new Error(`connect to ${url} timed out`)); }, timeout);
      ws.onopen = () => { clearTimeout(timer); resolve(new RoomClient(ws, inboxLimit)); };
      ws.onerror = () => { clearTimeout(timer); reject(new Error(`cannot connect to ${url}`)); };
    });
  }

  constructor(ws, inboxLimit = 10000) {
    this.ws = ws;
    this.peerId = null;
    this.inbox = [];
    this.inboxLimit = inboxLimit;
    this.closed = null;            // a ClosedError once the connection has ended
    this._nextId = 1;
    this._pending = new Map();     // id -> {resolve, reject, method}
    this._waiters = new Set();     // functions re-checked whenever the inbox or the state changes
    this._listeners = new Map();   // method (or "*") -> Set of handlers
    this._closeWaiters = [];
    ws.onmessage = (event) => this._receive(event.data);
    ws.onerror = () => {};
    ws.onclose = (event) => this._ended(event.code || 1005, event.reason || "");
  }

  // ---- the raw layer --------------------------------------------------

  /** Sends `{jsonrpc, id, method, params}` and resolves with `result` (rejects with RoomError / ClosedError). */
  call(method, params, { timeout = DEFAULT_TIMEOUT_MS } = {}) {
    if (this.closed) return Promise.reject(this.closed);
    const id = this._nextId++;
    const message = { jsonrpc: "2.0", id, method };
    if (params !== undefined && params !== null) message.params = params;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this._pending.delete(id); reject(new TimeoutError(`the answer to ${method}`, timeout, this.inbox)); }, timeout);
      this._pending.set(id, {
        method,
        resolve: (v) => { clearTimeout(timer); resolve(v); },
        reject: (e) => { clearTimeout(timer); reject(e); },
      });
      this.ws.send(JSON.stringify(message));
    });
  }

  /** Sends a notification (no id; a failure comes back as an `on-error` push). */
  notify(method, params) {
    if (this.closed) throw this.closed;
    const message = { jsonrpc: "2.0", method };
    if (params !== undefined && params !== null) message.params = params;
    this.ws.send(JSON.stringify(message));
  }

  /** Calls `handler(params, push)` for every push of `method` ("*" for all). Returns a function that unregisters it. */
  on(method, handler) {
    if (!this._listeners.has(method)) this._listeners.set(method, new Set());
    this._listeners.get(method).add(handler);
    return () => this._listeners.get(method).delete(handler);
  }

  /**
   * Resolves with the params of the first queued push of `method` (null: any push) whose params pass
   * `where`, and removes it; the entries before it stay queued in order. The one predicate contract of the
   * three kits (Swift `next(_:where:)`, Python `next(method, where=…)`): `where(params)` gets the push's
   * params (`{}` when it has none) and is truthy for the one wanted; a predicate that throws a TypeError on a
   * push (another shape: `params.peer` undefined) does not match it.
   *
   *   await client.next("on-peer-join");
   *   await client.next("on-peer-update", { where: (p) => p.changed.includes("role"), timeout: 10000 });
   *
   * Rejects at once with an UnknownPushError when `method` is not a push roomd sends (PUSH_NAMES, from
   * docs/openrpc.json), naming the close ones: `unknown push "on-role-change-requested": did you mean
   * on-role-change-request, …?`. Rejects with a TimeoutError saying what it waited for (`description`, else the method and
   * `where <the predicate's name>`), the timeout and the pushes queued instead; with ClosedError once the
   * connection has ended and no such push is left.
   *
   * Deprecated: `next(push => …)`, a function first, calls it with each whole push `{method, params}`:
   * `true` resolves with the push, any other truthy value is resolved as is.
   */
  next(what, { timeout = DEFAULT_TIMEOUT_MS, where, description } = {}) {
    const isPush = (entry) => entry && typeof entry === "object" && !Array.isArray(entry) && typeof entry.method === "string" && !("id" in entry);
    const passes = (test, value) => {
      try { return test(value); } catch (error) {
        if (error instanceof TypeError) return undefined;   // a push of another shape: not this one
        throw error;
      }
    };
    if (typeof what === "function") {
      if (!RoomClient._warnedWholePush) {
        RoomClient._warnedWholePush = true;
        console.warn("roomd.js: next(predicate) with the whole push is deprecated; use next(method, {where}), whose predicate gets the params");
      }
      const matcher = (entry) => {
        if (!isPush(entry)) return undefined;
        const value = passes(what, entry);
        return value === true ? entry : (value ? value : undefined);   // falsy: no match
      };
      return this._take(matcher, timeout, description ?? "a push the predicate takes");
    }
    const method = what ?? null;
    if (method !== null && !PUSH_NAMES.includes(method)) {   // a misspelled push: at once, not after the timeout
      return Promise.reject(new UnknownPushError(method, closePushes(method)));
    }
    const matcher = (entry) => {
      if (!isPush(entry) || (method !== null && entry.method !== method)) return undefined;
      const params = entry.params ?? {};
      return !where || passes(where, params) ? params : undefined;
    };
    const waitedFor = description
      ?? (method ?? "a push (any)") + (where ? ` where ${where.name || "<predicate>"}` : "");
    return this._take(matcher, timeout, waitedFor);
  }

  /** The next inbox entry, whatever it is. */
  nextMessage({ timeout = DEFAULT_TIMEOUT_MS } = {}) {
    return this._take((entry) => entry, timeout, "a message (any)");
  }

  /** Removes and returns everything queued. */
  drain() {
    const entries = this.inbox;
    this.inbox = [];
    return entries;
  }

  /** Waits `ms`, then removes and returns what is queued (assert it is empty). */
  async expectSilence(ms) {
    await new Promise((r) => setTimeout(r, ms));
    return this.drain();
  }

  /** Resolves with the close code once the connection has ended (the server's, or 1006). */
  closeCode() {
    if (this.closed) return Promise.resolve(this.closed.code);
    return new Promise((resolve) => this._closeWaiters.push(resolve));
  }

  /** Closes the connection and resolves with the close code once it has ended. */
  close(code = 1000, reason = "") {
    if (!this.closed) this.ws.close(code, reason);
    return this.closeCode();
  }

  /**
   * Keeps this peer's token fresh by itself (PROTOCOL.md section 23): at each `on-token-expiring` it
   * asks `provider()` (a function, may be async: your backend mints the token) for a new token and
   * sends `token-refresh`; the warning leaves the inbox. A failed refresh is tried again after 1, 2, 4
   * and 8 s. Returns a function that stops it.
   *
   *   const stop = client.refreshTokens(() => fetch("/token").then((r) => r.text()));
   */
  refreshTokens(provider) {
    let stopped = false;
    const refresh = async () => {
      for (const delay of [0, 1000, 2000, 4000, 8000]) {
        if (delay) await new Promise((resolve) => setTimeout(resolve, delay));
        if (stopped || this.closed) return;
        try {
          await this.call("token-refresh", { token: await provider() });
          return;
        } catch (error) {
          if (error instanceof ClosedError) return;
        }
      }
    };
    const off = this.on("on-token-expiring", (params, push) => {
      const index = this.inbox.indexOf(push);
      if (index >= 0) this.inbox.splice(index, 1);
      refresh();
    });
    return () => { stopped = true; off(); };
  }

  // ---- typed helpers (PROTOCOL.md section 4) ----------------------------

  /** `join`: resolves with `{peer, room, policy, peers, resumed}` and remembers `peerId`. */
  async join({ token, name, data, roomId, peerId } = {}) {
    const result = await this.call("join", params({ token, name, data, room_id: roomId, peer_id: peerId }));
    this.peerId = result.peer.peer_id;
    return result;
  }

  /** `leave`: others get `on-peer-leave`; the server then closes with 1000. */
  async leave(reason) { await this.call("leave", params({ reason })); }

  /** `peer-update`: resolves with this peer as it is now. */
  async peerUpdate({ name, data } = {}) { return (await this.call("peer-update", params({ name, data }))).peer; }

  /** `track-add` (type "audio" or "video"): resolves with the stored track. */
  async trackAdd({ type, trackId, source, mute, description }) {
    return (await this.call("track-add", params({ track_id: trackId, type, source, mute, description }))).track;
  }

  async trackUpdate({ trackId, mute, description }) {
    return (await this.call("track-update", params({ track_id: trackId, mute, description }))).track;
  }

  async trackRemove(trackId) { await this.call("track-remove", { track_id: trackId }); }

  /** `broadcast` to everyone else, one peer (`peerId`) or `roles`: resolves with `{message_id, timestamp}`. */
  broadcast(message, { type = "chat", peerId, roles } = {}) {
    return this.call("broadcast", params({ info: { message, type }, peer_id: peerId, roles }));
  }

  /** `chat-history`: resolves with `{messages (oldest first), more}`, the `limit` messages before `before`. */
  chatHistory({ before, limit } = {}) { return this.call("chat-history", params({ before, limit })); }

  /** `message-delete`: one's own message, or any with `moderateChat`. */
  async messageDelete(messageId) { await this.call("message-delete", { message_id: messageId }); }

  /** `chat-clear` (`moderateChat`): empties the room's history. */
  async chatClear() { await this.call("chat-clear", {}); }

  /** `message-pin` (`moderateChat`): pins a message of the history; null unpins. */
  async messagePin(messageId) { await this.call("message-pin", { message_id: messageId }); }

  /** `question-add`: resolves with the Question. */
  questionAdd(text) { return this.call("question-add", { text }); }

  /** `question-vote` with `vote` "up", "down" or "none": resolves with the Question. */
  questionVote(questionId, vote) { return this.call("question-vote", { question_id: questionId, vote }); }

  /** `question-list`: resolves with `{questions, total}`. */
  questionList({ state, order, offset, limit } = {}) { return this.call("question-list", params({ state, order, offset, limit })); }

  /** `question-update` (`moderateChat`; the asker may hide its own): resolves with the Question. */
  questionUpdate(questionId, { state, pinned } = {}) {
    return this.call("question-update", params({ question_id: questionId, state, pinned }));
  }

  async questionDelete(questionId) { await this.call("question-delete", { question_id: questionId }); }
  /** `react`: a reaction to a message (`target` a message id), or `count` taps on "stream" / "contestant:<id>"; resolves with `{target, type, total}`. */
  react(target, type, { count } = {}) { return this.call("react", params({ target, type, count })); }

  /** `unreact`: takes this user's reaction off a message; resolves with `{target, type, total}`. */
  unreact(target, type) { return this.call("unreact", { target, type }); }

  /** `reactions-get`: resolves with the `counts` `[{target, type, total, mine}]` of up to 100 targets. */
  async reactionsGet(targets) { return (await this.call("reactions-get", { targets })).counts; }

  /** `peer-ban` (`removeOthers`): every peer of the user (`userId`, or the user of `peerId`) is removed (4001) and refused (40301) until the ban ends. */
  async peerBan({ userId, peerId, durationS, reason } = {}) {
    await this.call("peer-ban", params({ user_id: userId, peer_id: peerId, duration_s: durationS, reason }));
  }

  /** `peer-unban` (`removeOthers`). */
  async peerUnban(userId) { await this.call("peer-unban", { user_id: userId }); }

  /** `chat-ban` (`moderateChat`): the user stays but may not send, ask or report (40302); only its peers get `on-chat-state`. */
  async chatBan({ userId, peerId, durationS, shadow } = {}) {
    await this.call("chat-ban", params({ user_id: userId, peer_id: peerId, duration_s: durationS, shadow }));
  }

  /** `chat-unban` (`moderateChat`). */
  async chatUnban(userId) { await this.call("chat-unban", { user_id: userId }); }

  /** `chat-state` (`moderateChat`): pause the chat and/or set slow mode (0 off); resolves with `{paused, slow_mode_s}`. */
  chatState({ paused, slowModeS } = {}) { return this.call("chat-state", params({ paused, slow_mode_s: slowModeS })); }

  /** `report` of one target (`messageId`, `questionId` or `peerId`) to the moderators; resolves with the `report_id`. */
  async report(reason, { messageId, questionId, peerId } = {}) {
    const target = params({ message_id: messageId, question_id: questionId, peer_id: peerId });
    return (await this.call("report", { ...target, reason })).report_id;
  }

  /** `report-resolve` (`moderateChat`, 1.3): resolves an open report; resolves with the Report. Every `moderateChat` peer gets `on-report-update`. */
  async reportResolve(reportId, { note } = {}) {
    return (await this.call("report-resolve", params({ report_id: reportId, note }))).report;
  }

  /** `role-change-request` for one peer: polite resolves with the request's token (null if nothing to do), forced with null. */
  async roleChangeRequest(peerId, role, { force = false } = {}) {
    const result = await this.call("role-change-request", { requested_for: peerId, role, force });
    return (result && result.token) || null;
  }

  /** Bulk role change (always forced): resolves with the changed peer ids. */
  async changeRoles(roles, role) {
    return (await this.call("role-change-request", { roles, role, force: true })).changed;
  }

  /** `role-change`: accepts a polite request; resolves with this peer in its new role. */
  async roleChange(token) { return (await this.call("role-change", { token })).peer; }

  async roleChangeReject(token) { await this.call("role-change-reject", { token }); }

  async trackUpdateRequest(peerId, trackId, mute) {
    await this.call("track-update-request", { requested_for: peerId, track_id: trackId, mute });
  }

  async changeTrackMuteState({ value, roles, type, source }) {
    return (await this.call("change-track-mute-state-request", params({ value, roles, type, source }))).tracks_affected;
  }

  /** Removes a peer (closed with 4001). */
  async peerLeaveRequest(peerId, reason) { await this.call("peer-leave-request", params({ requested_for: peerId, reason })); }

  /** Ends the room for everyone (closed with 4002). */
  async endRoom({ reason, lock = false } = {}) { await this.call("end-room", params({ reason, lock })); }

  async groupJoin(name) { return (await this.call("group-join", { name })).groups; }
  async groupLeave(name) { return (await this.call("group-leave", { name })).groups; }
  /** Joins the `_handraise` group: every peer gets `on-peer-update` with changed `["groups"]`. */
  raiseHand() { return this.groupJoin(HAND_RAISE_GROUP); }
  lowerHand() { return this.groupLeave(HAND_RAISE_GROUP); }

  // The call-in queue (PROTOCOL.md section 26), as a harness scripts a call-in (Swift's askToJoinStage(note:),
  // stageQueue(), invite(_:); Python's ask_to_join_stage ...); stageRequest ... stageUnblock below send the calls as is.

  /** `stage-request`: asks to come on stage; resolves with the StageRequest (`status` "waiting", `position`, …). */
  async askToJoinStage(note = null) { return (await this.call("stage-request", params({ note }))).request; }

  /** `stage-list` (moderating): `{requests, total}`, the waiting requests by position. */
  stageQueue({ status, offset, limit } = {}) { return this.call("stage-list", params({ status, offset, limit })); }

  /** `stage-invite` (moderating) of a StageRequest or its id: a polite role change; resolves with `{request, token}`. */
  invite(request, { role } = {}) {
    const requestId = typeof request === "string" ? request : request.request_id;
    return this.call("stage-invite", params({ request_id: requestId, role }));
  }

  /** The next `on-stage-queue` (moderating peers, coalesced) whose params pass `where`: `{changed, removed, waiting}`. */
  nextStageQueue({ where, timeout } = {}) { return this.next("on-stage-queue", params({ where, timeout })); }

  /** The StageRequest of the next `on-stage-status` (this user's request changed status), in `status` if given. */
  async nextStageStatus(status = null, { timeout } = {}) {
    const inStatus = (p) => status === null || p.request.status === status;
    const description = "on-stage-status" + (status === null ? "" : ` where status == "${status}"`);
    return (await this.next("on-stage-status", params({ where: inStatus, timeout, description }))).request;
  }

  findPeer({ role, group, limit } = {}) { return this.call("find-peer", params({ role, group, limit })); }
  ping(timestamp) { return this.call("ping", params({ timestamp })); }

  // ---- generated from docs/openrpc.json by scripts/kit-methods.py: do not edit ----
  // Calls without a hand-written helper: required params positional, the others in an options
  // object (camelCase); each resolves with the call's result as the server sent it.
  /** `peer-attributes-set`: Set or delete attributes of one's own peer (updateOwnMetadata) or, with a moderating role, another's. */
  peerAttributesSet({ peerId, set, delete_ } = {}) { return this.call("peer-attributes-set", { ...params({ peer_id: peerId, set, delete: delete_ }) }); }
  /** `change-track-mute-state-request`: Mute, or ask to unmute, the matching tracks of every other peer. */
  changeTrackMuteStateRequest(value, { roles, type, source } = {}) { return this.call("change-track-mute-state-request", { value, ...params({ roles, type, source }) }); }
  /** `group-add`: Add a peer to a group (changeRole unless peer_id is one's own). */
  groupAdd(name, peerId) { return this.call("group-add", { name, peer_id: peerId }); }
  /** `group-remove`: Remove a peer from a group (changeRole unless peer_id is one's own). */
  groupRemove(name, peerId) { return this.call("group-remove", { name, peer_id: peerId }); }
  /** `audio-level`: Report levels of one's own audio tracks (for active-speakers). */
  audioLevel(levels) { return this.call("audio-level", { levels }); }
  /** `peer-iter-next`: The next page of a find-peer iterator. */
  peerIterNext(iterator, { limit } = {}) { return this.call("peer-iter-next", { iterator, ...params({ limit }) }); }
  /** `preview`: join's checks without joining: the room and the policy the token would get. */
  preview(token, { roomId } = {}) { return this.call("preview", { token, ...params({ room_id: roomId }) }); }
  /** `set-metadata`: Set (or with null delete) a session-store key. */
  setMetadata(key, value) { return this.call("set-metadata", { key, value }); }
  /** `get-metadata`: Read one session-store key, or every key with a value. */
  getMetadata({ key } = {}) { return this.call("get-metadata", { ...params({ key }) }); }
  /** `listen-metadata-change`: Choose the session-store keys whose changes are pushed (on-metadata-change). */
  listenMetadataChange(keys) { return this.call("listen-metadata-change", { keys }); }
  /** `poll-info-set`: Create a poll, or replace a created poll's info. */
  pollInfoSet(title, type, { pollId, duration, anonymous, visibility, vote, responses } = {}) { return this.call("poll-info-set", { title, type, ...params({ poll_id: pollId, duration, anonymous, visibility, vote, responses }) }); }
  /** `poll-questions-set`: Replace every question of a created poll. */
  pollQuestionsSet(pollId, questions) { return this.call("poll-questions-set", { poll_id: pollId, questions }); }
  /** `poll-info-get`: A poll's PollInfo. */
  pollInfoGet(pollId) { return this.call("poll-info-get", { poll_id: pollId }); }
  /** `poll-questions-get`: A page of a poll's questions. */
  pollQuestionsGet(pollId, { index, count } = {}) { return this.call("poll-questions-get", { poll_id: pollId, ...params({ index, count }) }); }
  /** `poll-start`: Start a created poll. */
  pollStart(pollId) { return this.call("poll-start", { poll_id: pollId }); }
  /** `poll-stop`: Stop a started poll. */
  pollStop(pollId) { return this.call("poll-stop", { poll_id: pollId }); }
  /** `poll-response`: Vote: answer (or skip) questions of a started poll. */
  pollResponse(pollId, responses) { return this.call("poll-response", { poll_id: pollId, responses }); }
  /** `poll-list`: The polls the caller may read, newest first. */
  pollList({ state } = {}) { return this.call("poll-list", { ...params({ state }) }); }
  /** `poll-result`: A poll's counts. */
  pollResult(pollId) { return this.call("poll-result", { poll_id: pollId }); }
  /** `poll-responses`: A page of a poll's responses (one's own with self:true). */
  pollResponses(pollId, { own, index, count } = {}) { return this.call("poll-responses", { poll_id: pollId, ...params({ self: own, index, count }) }); }
  /** `poll-leaderboard`: A quiz's leaderboard, or (without poll_id, 1.2) the session's. */
  pollLeaderboard({ pollId, offset, count } = {}) { return this.call("poll-leaderboard", { ...params({ poll_id: pollId, offset, count }) }); }
  /** `poll-answer-set`: Set or correct a stopped quiz's answers (pollWrite); scores are computed again. */
  pollAnswerSet(pollId, answers) { return this.call("poll-answer-set", { poll_id: pollId, answers }); }
  /** `hls-start`: Start the room's HLS live stream (state only). */
  hlsStart({ variants } = {}) { return this.call("hls-start", { ...params({ variants }) }); }
  /** `hls-stop`: Stop the room's HLS live stream. */
  hlsStop() { return this.call("hls-stop", {}); }
  /** `hls-timed-metadata`: Add HLS timed-metadata cues. */
  hlsTimedMetadata(metadataObjs) { return this.call("hls-timed-metadata", { metadata_objs: metadataObjs }); }
  /** `held-list`: The messages held for review. */
  heldList() { return this.call("held-list", {}); }
  /** `message-approve`: Send a held message to everyone. */
  messageApprove(messageId) { return this.call("message-approve", { message_id: messageId }); }
  /** `message-reject`: Drop a held message. */
  messageReject(messageId, { reason } = {}) { return this.call("message-reject", { message_id: messageId, ...params({ reason }) }); }
  /** `audit-list`: The room session's audit log: who did which moderation act. */
  auditList({ after, limit } = {}) { return this.call("audit-list", { ...params({ after, limit }) }); }
  /** `rtmp-start`: Start RTMP out (state only), optionally with the recording. */
  rtmpStart(rtmpUrls, { meetingUrl, record } = {}) { return this.call("rtmp-start", { rtmp_urls: rtmpUrls, ...params({ meeting_url: meetingUrl, record }) }); }
  /** `rtmp-stop`: Stop RTMP out (and the recording rtmp-start with record started). */
  rtmpStop() { return this.call("rtmp-stop", {}); }
  /** `recording-start`: Start the room's recording (state only). */
  recordingStart() { return this.call("recording-start", {}); }
  /** `recording-stop`: Stop the room's recording. */
  recordingStop() { return this.call("recording-stop", {}); }
  /** `token-refresh`: Swap in a new token of the same user and room. */
  tokenRefresh(token) { return this.call("token-refresh", { token }); }
  /** `stage-request`: Ask to come on stage, with a short note (1.3). */
  stageRequest({ note } = {}) { return this.call("stage-request", { ...params({ note }) }); }
  /** `stage-withdraw`: Withdraw one's own waiting or invited stage request (1.3). */
  stageWithdraw() { return this.call("stage-withdraw", {}); }
  /** `stage-list`: A page of the call-in queue (moderating peers). */
  stageList({ status, offset, limit } = {}) { return this.call("stage-list", { ...params({ status, offset, limit }) }); }
  /** `stage-invite`: Invite a waiting caller on stage: a polite role change (moderating with changeRole). */
  stageInvite(requestId, { role } = {}) { return this.call("stage-invite", { request_id: requestId, ...params({ role }) }); }
  /** `stage-decline`: Decline a waiting or invited stage request (moderating). */
  stageDecline(requestId, { reason } = {}) { return this.call("stage-decline", { request_id: requestId, ...params({ reason }) }); }
  /** `stage-block`: Keep a user out of the call-in queue (moderating). */
  stageBlock(userId, { durationS } = {}) { return this.call("stage-block", { user_id: userId, ...params({ duration_s: durationS }) }); }
  /** `stage-unblock`: Lift a user's stage block (moderating; a user without one is fine too). */
  stageUnblock(userId) { return this.call("stage-unblock", { user_id: userId }); }
  // ---- end of generated ----

  // ---- internals -------------------------------------------------------

  _receive(text) {
    let message;
    try { message = JSON.parse(text); } catch { message = text; }
    if (message && typeof message === "object" && !Array.isArray(message) && "id" in message
        && ("result" in message || "error" in message) && this._pending.has(message.id)) {
      const call = this._pending.get(message.id);
      this._pending.delete(message.id);
      if (message.error) {
        const e = message.error;
        call.reject(new RoomError(e.code, e.message, e.data, call.method));
      } else {
        call.resolve(message.result);
      }
      return;
    }
    this.inbox.push(message);
    if (this.inbox.length > this.inboxLimit) this.inbox.shift();
    if (message && typeof message === "object" && typeof message.method === "string" && !("id" in message)) {
      for (const key of [message.method, "*"]) {
        for (const handler of this._listeners.get(key) ?? []) {
          try { handler(message.params ?? {}, message); } catch (error) { console.error(error); }
        }
      }
    }
    this._wake();
  }

  _ended(code, reason) {
    if (this.closed) return;
    this.closed = new ClosedError(code, reason);
    for (const call of this._pending.values()) call.reject(this.closed);
    this._pending.clear();
    for (const resolve of this._closeWaiters) resolve(code);
    this._closeWaiters = [];
    this._wake();
  }

  _wake() {
    for (const check of [...this._waiters]) check();
  }

  _take(matcher, timeout, what) {
    return new Promise((resolve, reject) => {
      let timer;
      const check = () => {
        for (let i = 0; i < this.inbox.length; i++) {
          const value = matcher(this.inbox[i]);
          if (value !== undefined) {
            this.inbox.splice(i, 1);
            done();
            resolve(value);
            return;
          }
        }
        if (this.closed) { done(); reject(this.closed); }
      };
      const done = () => { clearTimeout(timer); this._waiters.delete(check); };
      timer = setTimeout(() => { done(); reject(new TimeoutError(what, timeout, this.inbox)); }, timeout);
      this._waiters.add(check);
      check();
    });
  }
}

/** A feed answer other than 200/304: the HTTP `status` and roomd's `{code, message}`. */
export class FeedError extends Error {
  constructor(status, code, message) {
    super(`${status} ${code}: ${message}`);
    this.name = "FeedError";
    this.status = status;
    this.code = code;
  }
}

/**
 * The audience feed (PROTOCOL.md section 24): a viewer without a WebSocket polls
 * GET /v2/rooms/{room_id}/feed every `interval` seconds (3), with times floored to whole
 * seconds on a grid — every reader of a room asks for the same spans, so one cached body
 * answers them all (roomd's cache, the browser's, a CDN's). A reader that fell behind
 * catches up in spans of at most 60 s; behind the window (410) it starts again from now.
 *
 *   const reader = new FeedReader("https://roomd.example.com", "show", { token });
 *   for await (const span of reader) render(span);   // stops after the span that says ended
 */
export class FeedReader {
  constructor(baseURL, room, {
    token, interval = 3, clock = () => Date.now() / 1000,
    sleep = seconds => new Promise(resolve => setTimeout(resolve, seconds * 1000)),
    fetch: fetchFunction = (...args) => globalThis.fetch(...args),
  } = {}) {
    if (!(interval >= 1 && interval <= FEED_MAX_SPAN)) throw new RangeError("interval: 1 to 60 seconds");
    this.baseURL = baseURL.replace(/\/+$/, "");
    this.room = room;
    this.token = token;
    this.interval = Math.floor(interval);
    this.clock = clock;
    this.sleep = sleep;
    this.fetch = fetchFunction;
    this.lastTo = null;
    this.ended = false;
  }

  /** The spans due now: [from, to) pairs from the last one's end to the last grid point. */
  spansDue() {
    const now = Math.floor(this.clock());
    const to = now - (now % this.interval);
    let from = this.lastTo === null ? to - this.interval : this.lastTo;
    const spans = [];
    while (from < to) {
      const end = Math.min(to, from + FEED_MAX_SPAN);
      spans.push([from, end]);
      from = end;
    }
    return spans;
  }

  /** One span, decoded; rejects with a FeedError. */
  async fetchSpan(from, to) {
    const url = `${this.baseURL}/v2/rooms/${encodeURIComponent(this.room)}/feed?from=${from}&to=${to}`;
    const answer = await this.fetch(url, { headers: this.token ? { Authorization: `Bearer ${this.token}` } : {} });
    const body = await answer.text();
    if (answer.status !== 200) {
      let error = {};
      try { error = JSON.parse(body); } catch { /* not JSON */ }
      throw new FeedError(answer.status, error.code ?? answer.status, error.message ?? body);
    }
    return JSON.parse(body);
  }

  /** Asks for every span due now; resolves to them in order (404: none yet; 410: from now). */
  async poll() {
    const spans = [];
    for (const [from, to] of this.spansDue()) {
      let span;
      try {
        span = await this.fetchSpan(from, to);
      } catch (error) {
        if (error instanceof FeedError && error.status === 410) { this.lastTo = null; return spans; }
        if (error instanceof FeedError && error.status === 404) { this.lastTo = to; continue; }
        throw error;
      }
      this.lastTo = to;
      spans.push(span);
      if (span.ended) { this.ended = true; break; }
    }
    return spans;
  }

  async *[Symbol.asyncIterator]() {
    while (!this.ended) {
      for (const span of await this.poll()) yield span;
      if (!this.ended) await this.sleep(this.interval);
    }
  }
}

/** A test-mode route answered other than 200: `status`, roomd's `code` and `message`. */
export class TestModeError extends Error {
  constructor(route, status, code, message) {
    super(`${route}: ${status} ${code}: ${message}`);
    this.name = "TestModeError";
    this.status = status;
    this.code = code;
  }
}

/**
 * roomd's test mode (PROTOCOL.md sections 25 and 33) for a browser or Node harness: the manual
 * clock, faults (connections, scripted errors, pushes by name), the synthetic audience and the
 * journal, over /v2/test/* with a management token (mint it in the harness: roomd token
 * --management). Served by roomd itself, the page is same-origin and needs no CORS header.
 *
 *   const roomd = new RoomdTestMode("http://127.0.0.1:7880", { token });
 *   await roomd.addAudience("show", 10000);
 *   await roomd.audienceAct("show", "react", 2000, { target: "stream", type: "love" });
 *   await roomd.advance(1000);               // the coalesced on-reactions goes out
 */
export class RoomdTestMode {
  constructor(baseURL, { token, fetch: fetchFunction = (...args) => globalThis.fetch(...args) } = {}) {
    this.baseURL = baseURL.replace(/\/+$/, "");
    this.token = token;
    this.fetch = fetchFunction;
  }

  /** Moves the manual clock by `ms`: every timer it passes runs first. Resolves to the clock's time. */
  async advance(ms) { return (await this.route("POST", "clock", { advance_ms: ms })).now; }

  /** The manual clock's time (ms since the epoch). */
  async clock() { return (await this.route("GET", "clock")).now; }

  /** A connection fault: action "close" (code), "stall" / "delay" (ms), "drop" (count). */
  async fault(action, { peerId, userId, ...options } = {}) {
    return (await this.route("POST", "faults", params({ action, peer_id: peerId, user_id: userId, ...options }))).peers;
  }

  /** The next `count` calls of `method` (by `peerId`, or anyone) answer error `code` and change nothing. */
  async failNext(method, code, { message, count = 1, peerId } = {}) {
    await this.route("POST", "faults", params({ method, error: params({ code, message }), count, peer_id: peerId }));
  }

  /** The next `count` pushes named `push` are dropped: `peerId`'s, or the next as sent, for everyone. */
  async dropNext(push, { count = 1, peerId } = {}) {
    checkPush(push);
    await this.route("POST", "faults", params({ push, action: "drop", count, peer_id: peerId }));
  }

  /** The next `count` pushes named `push` (and every push behind them) are held for `ms`. */
  async delayNext(push, ms, { count = 1, peerId } = {}) {
    checkPush(push);
    await this.route("POST", "faults", params({ push, action: "delay", ms, count, peer_id: peerId }));
  }

  /** The next `count` hook calls (section 30) fail with `status` (or "timeout") without reaching the hook. */
  async failHooks(count = 1, status = 500) {
    await this.route("POST", "faults", { hooks: { fail_next: count, status } });
  }

  /** Every fault in force. */
  async faults() { return (await this.route("GET", "faults")).faults; }

  /** Ends every fault now. */
  async clearFaults() { await this.route("DELETE", "faults"); }

  /** `count` socketless peers of `role` join `room`; resolves to `{peer_ids, count}`. */
  async addAudience(room, count, { role = "viewer", seed, namePrefix } = {}) {
    return this.route("POST", "audience", params({ room_id: room, count, role, seed, name_prefix: namePrefix }));
  }

  /** `count` of the room's synthetic peers call `action` with `params`; resolves to `{done, errors, messages}`. */
  async audienceAct(room, action, count, actionParams = {}) {
    return this.route("POST", "audience/act", { room_id: room, action, count, params: actionParams });
  }

  /** Every synthetic peer of `room` leaves; resolves to how many. */
  async removeAudience(room) {
    return (await this.route("DELETE", `audience?room_id=${encodeURIComponent(room)}`)).removed;
  }

  /** The journal of `room`'s latest session: one object per event, in order. */
  async journal(room) {
    const text = await this.route("GET", `journal?room_id=${encodeURIComponent(room)}`, undefined, false);
    return text.split("\n").filter(line => line).map(line => JSON.parse(line));
  }

  /** One /v2/test/ request; rejects with a TestModeError (404 names --test-mode). */
  async route(method, route, body, json = true) {
    const init = { method, headers: { Authorization: `Bearer ${this.token}` } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers["Content-Type"] = "application/json";
    }
    const answer = await this.fetch(`${this.baseURL}/v2/test/${route}`, init);
    const text = await answer.text();
    if (answer.status !== 200) {
      let error = {};
      try { error = JSON.parse(text); } catch { /* not JSON */ }
      throw new TestModeError(`${method} /v2/test/${route}`, answer.status, error.code ?? answer.status,
                              error.message ?? text);
    }
    return json ? JSON.parse(text) : text;
  }
}

function checkPush(name) {
  if (!PUSH_NAMES.includes(name)) throw new UnknownPushError(name, closePushes(name));
}

const FEED_MAX_SPAN = 60;

/** The params object without undefined/null values (absent, as the protocol reads them). */
function params(pairs) {
  const out = {};
  for (const [key, value] of Object.entries(pairs)) if (value !== undefined && value !== null) out[key] = value;
  return out;
}

export default RoomClient;
