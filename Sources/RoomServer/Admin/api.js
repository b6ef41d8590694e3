// The console's only way to roomd: its REST API and the HTTP feed on this
// page's own origin (PROTOCOL.md sections 9, 24 and 32), with the management
// token as `Authorization: Bearer`. The token lives in this tab's
// sessionStorage only: never in a URL, a cookie or storage that outlives the tab.

const TOKEN_KEY = "roomd.console.token";

export function savedToken() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function saveToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/** An answer other than 2xx: roomd's `{code, message}`, with the route that gave it. */
export class ApiError extends Error {
  constructor(status, code, message, route) {
    super(message);
    this.status = status;
    this.code = code;
    this.route = route;
  }

  /** roomd has no such route (an older roomd, or a route not built yet). */
  get missingRoute() {
    return this.status === 404 && this.code === 404 && /^no route for/.test(this.message);
  }

  toString() {
    if (this.missingRoute) return `${this.route}: this roomd does not have this route (${this.code}: ${this.message})`;
    return `${this.code}: ${this.message}`;
  }
}

const enc = encodeURIComponent;

function query(params) {
  const parts = Object.entries(params || {})
    .filter(([, value]) => value !== undefined && value !== null && value !== "")
    .map(([key, value]) => `${enc(key)}=${enc(String(value))}`);
  return parts.length ? `?${parts.join("&")}` : "";
}

export async function call(method, path, body, params) {
  const route = `${method} ${path}`;
  const init = {
    method,
    headers: { Authorization: `Bearer ${savedToken()}` },
    cache: "no-store",
    credentials: "omit",
    referrerPolicy: "no-referrer",
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let answer;
  try {
    answer = await fetch(path + query(params), init);
  } catch (error) {
    throw new ApiError(0, 0, `roomd did not answer (${error.message})`, route);
  }
  const text = await answer.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!answer.ok) {
    const code = json && json.code !== undefined ? json.code : answer.status;
    const message = json && json.message ? json.message : text.slice(0, 200) || answer.statusText;
    throw new ApiError(answer.status, code, message, route);
  }
  return json;
}

const room = (id) => `/v2/active-rooms/${enc(id)}`;

// Every route the console uses, in one place (docs/openapi.yaml names them).
export const api = {
  rooms: (start) => call("GET", "/v2/active-rooms", undefined, { limit: 50, start }),
  room: (id) => call("GET", room(id)),
  peers: (id) => call("GET", `${room(id)}/peers`),
  removePeer: (id, peerId, reason) => call("POST", `${room(id)}/remove-peers`, { peer_id: peerId, reason }),
  mutePeer: (id, peerId) => call("POST", `${room(id)}/peers/${enc(peerId)}/mute`, {}),
  ban: (id, userId, reason) => call("POST", `${room(id)}/ban`, { user_id: userId, reason }),
  unban: (id, userId) => call("POST", `${room(id)}/unban`, { user_id: userId }),
  bans: (id) => call("GET", `${room(id)}/bans`),
  endRoom: (id, reason, lock) => call("POST", `${room(id)}/end-room`, { reason, lock }),
  unlock: (id) => call("POST", `${room(id)}/unlock`, {}),

  chat: (id, limit) => call("GET", `${room(id)}/chat`, undefined, { limit }),
  deleteMessage: (id, messageId) => call("DELETE", `${room(id)}/chat/${enc(messageId)}`),
  pin: (id, messageId) => call("POST", `${room(id)}/chat/pin`, { message_id: messageId }),
  clearChat: (id) => call("POST", `${room(id)}/chat/clear`, {}),
  chatState: (id, state) => call("POST", `${room(id)}/chat/state`, state),
  chatBans: (id) => call("GET", `${room(id)}/chat-bans`),
  chatBan: (id, userId, shadow) => call("POST", `${room(id)}/chat-bans`, { user_id: userId, shadow }),
  chatUnban: (id, userId) => call("DELETE", `${room(id)}/chat-bans/${enc(userId)}`),

  held: (id) => call("GET", `${room(id)}/held`),
  approve: (id, messageId) => call("POST", `${room(id)}/held/${enc(messageId)}/approve`, {}),
  reject: (id, messageId, reason) => call("POST", `${room(id)}/held/${enc(messageId)}/reject`, { reason }),

  stage: (id) => call("GET", `${room(id)}/stage`),
  invite: (id, requestId) => call("POST", `${room(id)}/stage/${enc(requestId)}/invite`, {}),
  decline: (id, requestId) => call("POST", `${room(id)}/stage/${enc(requestId)}/decline`, {}),
  block: (id, userId) => call("POST", `${room(id)}/stage/block`, { user_id: userId }),
  unblock: (id, userId) => call("POST", `${room(id)}/stage/unblock`, { user_id: userId }),

  reports: (id) => call("GET", `${room(id)}/reports`, undefined, { status: "open" }),
  resolve: (id, reportId, note) => call("POST", `${room(id)}/reports/${enc(reportId)}/resolve`, note ? { note } : {}),

  questions: (id, state) => call("GET", `${room(id)}/questions`, undefined, { state, order: "top" }),
  updateQuestion: (id, questionId, change) => call("PATCH", `${room(id)}/questions/${enc(questionId)}`, change),

  listPolls: (id) => call("GET", `${room(id)}/polls?limit=100`),
  createPoll: (id, poll) => call("POST", `${room(id)}/polls`, poll),
  startPoll: (id, pollId) => call("POST", `${room(id)}/polls/${enc(pollId)}/start`, {}),
  stopPoll: (id, pollId) => call("POST", `${room(id)}/polls/${enc(pollId)}/stop`, {}),
  pollResults: (id, pollId) => call("GET", `${room(id)}/polls/${enc(pollId)}/results`),

  stream: (id) => call("GET", `${room(id)}/stream`),
  setStream: (id, state) => call("POST", `${room(id)}/stream`, { state }),

  audit: (id, after) => call("GET", `${room(id)}/audit`, undefined, { after, limit: 100 }),

  // The audience feed (section 24) of the last full minute: the pin and the chat state.
  feed: (id) => {
    const to = Math.floor(Date.now() / 1000) - 1;
    return call("GET", `/v2/rooms/${enc(id)}/feed`, undefined, { from: to - 60, to });
  },
};
