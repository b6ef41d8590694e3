// The producer's console (PROTOCOL.md section 32): plain DOM, no framework.
// Text from peers (names, chat, questions) is only ever set as textContent.
import { api, ApiError, savedToken, saveToken, forgetToken } from "./api.js";

const REFRESH_MS = 2500; // the live tail: at most 3 s old
const PEERS_PER_PAGE = 20;

// MARK: DOM helpers

/** h("button", {class: "x", onclick: f}, "text", child…) */
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node && typeof value !== "string") node[key] = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

const time = (ms) => (ms ? new Date(ms).toLocaleTimeString([], { hour12: false }) : "");
const dateTime = (ms) => (ms ? new Date(ms).toLocaleString([], { hour12: false }) : "");
const who = (ref) => {
  if (!ref) return "";
  if (ref.type === "rest") return "operator (REST)";
  if (ref.type === "hook") return "app hook";
  const name = ref.info && ref.info.name;
  return name || ref.peer_id || "server";
};
const errorText = (error) => (error instanceof ApiError ? error.toString() : String(error && error.message ? error.message : error));

/** A status line: what the last action did, or its error with code and message. */
function statusLine() {
  const line = h("p", { class: "status", role: "status", "aria-live": "polite" });
  line.ok = (text) => {
    line.className = "status ok";
    line.textContent = text;
  };
  line.fail = (error) => {
    line.className = "status error";
    line.textContent = errorText(error);
  };
  line.clear = () => {
    line.className = "status";
    line.textContent = "";
  };
  return line;
}

/** A button that runs `action`, shows its answer on `status` and then `after()`. */
function act(label, status, action, after, attrs) {
  const button = h("button", { type: "button", ...(attrs || {}) }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const done = await action();
      status.ok(typeof done === "string" ? done : `${label}: done`);
      if (after) await after();
    } catch (error) {
      status.fail(error);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** Replaces `box`'s content when `data` changed; keeps the focus on the same control. */
function renderInto(box, data, build) {
  const key = JSON.stringify(data);
  if (box.dataset.rendered === key) return;
  const focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.dataset.key : null;
  box.dataset.rendered = key;
  box.replaceChildren(...[build(data)].flat(Infinity).filter((node) => node !== null && node !== undefined));
  if (focused) {
    const again = box.querySelector(`[data-key="${CSS.escape(focused)}"]`);
    if (again) again.focus();
  }
}

function table(caption, headers, rows, empty) {
  if (!rows.length) return h("p", { class: "muted" }, empty);
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      {},
      h("caption", { class: "sr-only" }, caption),
      h("thead", {}, h("tr", {}, headers.map((name) => h("th", { scope: "col" }, name)))),
      h("tbody", {}, rows),
    ),
  );
}

// MARK: the token

const tokenState = document.getElementById("token-state");
const tokenEntry = document.querySelectorAll("#token-form .entry");
function showTokenState() {
  const set = Boolean(savedToken());
  tokenState.textContent = set ? "token set (this tab only)" : "";
  for (const node of tokenEntry) node.hidden = set;
  document.getElementById("forget").hidden = !set;
}
document.getElementById("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = document.getElementById("token");
  const token = input.value.trim();
  input.value = "";
  if (!token) return;
  saveToken(token);
  showTokenState();
  route();
});
document.getElementById("forget").addEventListener("click", () => {
  forgetToken();
  showTokenState();
  route();
});

// MARK: pages

const main = document.getElementById("main");
let timer = null;
let loading = false;

function every(load) {
  clearInterval(timer);
  const tick = async () => {
    if (loading) return;
    loading = true;
    try {
      await load();
    } finally {
      loading = false;
    }
  };
  tick();
  timer = setInterval(tick, REFRESH_MS);
}

function route() {
  clearInterval(timer);
  showTokenState();
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (!savedToken()) {
    main.replaceChildren(
      h("h2", {}, "Sign in"),
      h("p", {}, "Paste a management token above (roomd token --management). It stays in this tab only."),
    );
    document.getElementById("token").focus();
    return;
  }
  if (parts[0] === "room" && parts[1]) roomPage(parts[1], parts[2] || "chat");
  else roomsPage();
}

window.addEventListener("hashchange", () => {
  // A keyboard user who chose a tab keeps the focus on the tabs.
  const fromTabs = document.activeElement && document.activeElement.closest("nav.tabs");
  route();
  if (fromTabs) {
    const current = document.querySelector('nav.tabs a[aria-current="page"]');
    if (current) current.focus();
  } else {
    main.focus();
  }
});

function roomsPage() {
  document.title = "Rooms · roomd console";
  const status = statusLine();
  const list = h("div", { id: "rooms" });
  let start = null;
  const pages = [];
  const previous = h("button", { type: "button", disabled: true }, "Previous page");
  const next = h("button", { type: "button", disabled: true }, "Next page");
  let last = null;
  previous.addEventListener("click", () => {
    start = pages.pop() ?? null;
    load();
  });
  next.addEventListener("click", () => {
    pages.push(start);
    start = last;
    load();
  });
  async function load() {
    try {
      const answer = await api.rooms(start);
      last = answer.last;
      next.disabled = !last;
      previous.disabled = pages.length === 0;
      status.clear();
      renderInto(list, answer.rooms, (rooms) =>
        table(
          "Live rooms",
          ["Room", "Peers", "Stream", "Locked", "Started"],
          rooms.map((room) =>
            h(
              "tr",
              {},
              h("td", {}, h("a", { href: `#/room/${encodeURIComponent(room.room_id)}`, dataset: { key: room.room_id } }, room.room_id)),
              h("td", { class: "num" }, room.peer_count ?? ""),
              h("td", {}, streamSummary(room.hls)),
              h("td", {}, room.locked ? "locked" : "no"),
              h("td", {}, dateTime(room.started_at)),
            ),
          ),
          "No live rooms.",
        ),
      );
    } catch (error) {
      status.fail(error);
    }
  }
  main.replaceChildren(
    h("div", { class: "bar" }, h("h2", {}, "Live rooms"), h("div", { class: "actions" }, previous, next)),
    status,
    list,
  );
  every(load);
}

function streamSummary(hls) {
  if (!hls) return "not streaming";
  const state = hls.state || (hls.running ? "live" : "stopped");
  return hls.running && state !== "live" ? `${state} (running)` : state;
}

// MARK: a room

const TABS = [
  ["chat", "Chat"],
  ["peers", "Peers"],
  ["held", "Held"],
  ["stage", "Call-in queue"],
  ["reports", "Reports"],
  ["questions", "Q&A"],
  ["polls", "Polls"],
  ["stream", "Stream"],
  ["audit", "Audit log"],
];

function roomPage(roomId, tab) {
  const known = TABS.find(([key]) => key === tab) ? tab : "chat";
  document.title = `${roomId} · ${TABS.find(([key]) => key === known)[1]} · roomd console`;
  const summary = h("p", { class: "summary", id: "summary" }, "loading…");
  const headStatus = statusLine();
  const nav = h(
    "nav",
    { class: "tabs", "aria-label": "Room sections" },
    TABS.map(([key, label]) =>
      h("a", { href: `#/room/${encodeURIComponent(roomId)}/${key}`, "aria-current": key === known ? "page" : null }, label),
    ),
  );
  const section = h("section", { class: "panel", "aria-labelledby": "panel-title" });
  main.replaceChildren(
    h("p", { class: "crumb" }, h("a", { href: "#/" }, "← All rooms")),
    h(
      "div",
      { class: "bar" },
      h("h2", {}, "Room ", h("code", {}, roomId)),
      h(
        "div",
        { class: "actions" },
        act(
          "End room…",
          headStatus,
          async () => {
            const reason = prompt(`End ${roomId} for everyone? Reason:`, "show is over");
            if (reason === null) return "End room: cancelled";
            await api.endRoom(roomId, reason, false);
            return "Room ended";
          },
          null,
          { class: "danger" },
        ),
        act("Unlock", headStatus, async () => (await api.unlock(roomId), "Room unlocked")),
      ),
    ),
    summary,
    headStatus,
    nav,
    section,
  );
  const loadSummary = async () => {
    try {
      const { room } = await api.room(roomId);
      const parts = [h("span", {}, `${room.peer_count} ${room.peer_count === 1 ? "peer" : "peers"}`), h("span", {}, `stream: ${streamSummary(room.hls)}`)];
      if (room.locked) parts.push(h("span", { class: "badge" }, "locked"));
      parts.push(h("span", { class: "muted" }, `session ${room.session_id}`));
      summary.replaceChildren(...parts);
    } catch (error) {
      summary.replaceChildren(h("span", { class: "error" }, errorText(error)));
    }
  };
  const panel = PANELS[known](roomId, section);
  every(async () => {
    await Promise.all([loadSummary(), panel()]);
  });
}

/** One panel: a title, its controls, a status line, the list; returns its load(). */
function panelFrame(section, title, ...controls) {
  const status = statusLine();
  const list = h("div", { class: "list" });
  section.replaceChildren(h("h3", { id: "panel-title" }, title), ...controls, status, list);
  return { status, list };
}

/** Loads `fetch()` into `list`, or shows the route's error in its place (a missing route is named). */
async function fill(list, status, fetch, build) {
  let data;
  try {
    data = await fetch();
  } catch (error) {
    const text = errorText(error);
    if (list.dataset.rendered !== `error ${text}`) {
      list.dataset.rendered = `error ${text}`;
      list.replaceChildren(h("p", { class: "status error" }, text));
    }
    return;
  }
  renderInto(list, data, build);
}

const PANELS = {
  chat(roomId, section) {
    const pinned = h("div", { class: "pinned", id: "pinned" });
    const paused = h("input", { type: "checkbox", id: "chat-paused" });
    const slow = h("input", { type: "number", id: "chat-slow", min: "0", max: "3600", step: "1", value: "0", inputmode: "numeric" });
    const stateForm = h(
      "form",
      { class: "inline", id: "chat-state-form" },
      h("label", { for: "chat-paused" }, paused, " Chat paused"),
      h("label", { for: "chat-slow" }, "Slow mode (s)"),
      slow,
      h("button", { type: "submit" }, "Apply"),
    );
    const current = h("span", { class: "muted", id: "chat-state" });
    const bansBox = h("div", { class: "list", id: "chat-bans" });
    const bar = h("div", { class: "bar" }, current);
    const { status, list } = panelFrame(section, "Live chat", stateForm, bar, pinned);
    bar.append(act("Clear chat", status, async () => (await api.clearChat(roomId), "Chat cleared"), () => load(), { class: "danger" }));
    section.append(h("h4", {}, "Chat bans"), bansBox);
    let stateLoaded = false;
    stateForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const slowS = Number(slow.value);
      if (!Number.isInteger(slowS) || slowS < 0 || slowS > 3600) {
        status.fail(new Error("Slow mode: a whole number of seconds from 0 to 3600"));
        return;
      }
      try {
        const answer = await api.chatState(roomId, { paused: paused.checked, slow_mode_s: slowS });
        status.ok(`Chat state: ${answer && answer.paused ? "paused" : "open"}, slow mode ${answer ? answer.slow_mode_s : slowS} s`);
        stateLoaded = false;
        load();
      } catch (error) {
        status.fail(error);
      }
    });
    const user = (message) => message.sender && message.sender.info && message.sender.info.user_id;
    const showState = (view) => {
      const state = view.chat_state || {};
      current.textContent = `Chat is ${state.paused ? "paused" : "open"}${state.slow_mode_s ? `, slow mode ${state.slow_mode_s} s` : ""}.`;
      if (!stateLoaded && document.activeElement !== slow) {
        paused.checked = !!state.paused;
        slow.value = String(state.slow_mode_s || 0);
        stateLoaded = true;
      }
      renderInto(pinned, view.pinned, (message) =>
        message
          ? [
              h("strong", {}, "Pinned: "),
              h("span", {}, `${who(message.sender)}: ${message.info ? message.info.message : ""}`),
              " ",
              act("Unpin", status, async () => (await api.pin(roomId, null), "Unpinned"), load, { dataset: { key: "unpin" } }),
            ]
          : h("span", { class: "muted" }, "Nothing pinned."),
      );
    };
    const load = async () => {
      const history = api.chat(roomId, 50);
      await Promise.all([
        fill(list, status, () => history, (answer) => {
          const messages = (answer.messages || []).slice().reverse();
          if (!messages.length) return h("p", { class: "muted" }, "No messages.");
          return h(
            "ol",
            { class: "chat", "aria-label": "Messages, newest first" },
            messages.map((message) => {
              const id = message.message_id;
              const name = who(message.sender);
              const userId = user(message);
              return h(
                "li",
                { class: message.shadowed ? "shadowed" : "" },
                h("div", { class: "meta" }, h("time", {}, time(message.timestamp)), " ", h("strong", {}, name), message.sender && message.sender.role ? h("span", { class: "muted" }, ` · ${message.sender.role}`) : null, message.shadowed ? h("span", { class: "badge" }, "shadowed") : null),
                h("p", { class: "text" }, message.info ? message.info.message : ""),
                h(
                  "div",
                  { class: "actions" },
                  act("Delete", status, async () => (await api.deleteMessage(roomId, id), `Deleted a message from ${name}`), load, { "aria-label": `Delete message from ${name}`, dataset: { key: `del-${id}` } }),
                  act("Pin", status, async () => (await api.pin(roomId, id), `Pinned a message from ${name}`), load, { "aria-label": `Pin message from ${name}`, dataset: { key: `pin-${id}` } }),
                  userId ? act("Chat-ban", status, async () => (await api.chatBan(roomId, userId, false), `Chat-banned ${name}`), load, { "aria-label": `Chat-ban ${name}`, dataset: { key: `cb-${id}` } }) : null,
                  userId ? act("Shadow ban", status, async () => (await api.chatBan(roomId, userId, true), `Shadow-banned ${name}`), load, { "aria-label": `Shadow ban ${name}`, dataset: { key: `sb-${id}` } }) : null,
                  userId ? act("Ban", status, async () => (await api.ban(roomId, userId, "banned from the console"), `Banned ${name}`), load, { class: "danger", "aria-label": `Ban ${name} from the room`, dataset: { key: `ban-${id}` } }) : null,
                ),
              );
            }),
          );
        }),
        fill(bansBox, status, () => api.chatBans(roomId), (answer) =>
          table(
            "Chat bans",
            ["User", "Until", "Shadow", "By", ""],
            (answer.chat_bans || []).map((ban) =>
              h(
                "tr",
                {},
                h("td", {}, ban.user_id),
                h("td", {}, ban.until ? dateTime(ban.until) : "end of session"),
                h("td", {}, ban.shadow ? "shadow" : "no"),
                h("td", {}, who(ban.banned_by)),
                h("td", {}, act("Unban", status, async () => (await api.chatUnban(roomId, ban.user_id), `Chat-unbanned ${ban.user_id}`), load, { "aria-label": `Chat-unban ${ban.user_id}`, dataset: { key: `cu-${ban.user_id}` } })),
              ),
            ),
            "Nobody is chat-banned.",
          ),
        ),
        // The pin and the chat state: from GET chat when it carries them, else from the feed.
        history.then(
          (answer) => (answer && answer.state ? { pinned: answer.pinned ?? null, chat_state: answer.state } : api.feed(roomId)),
        ).catch(() => api.feed(roomId)).then(showState, (error) => {
          current.textContent = `Chat state unknown (${errorText(error)})`;
        }),
      ]);
    };
    return load;
  },

  peers(roomId, section) {
    const search = h("input", { type: "search", id: "peer-search", placeholder: "name contains…", autocomplete: "off" });
    const role = h("select", { id: "peer-role" }, h("option", { value: "" }, "All roles"));
    const previous = h("button", { type: "button" }, "Previous");
    const next = h("button", { type: "button" }, "Next");
    const counter = h("span", { class: "muted", role: "status" });
    let page = 0;
    let peers = [];
    const { status, list } = panelFrame(
      section,
      "Peers",
      h(
        "form",
        { class: "inline", role: "search" },
        h("label", { for: "peer-search" }, "Search by name"),
        search,
        h("label", { for: "peer-role" }, "Role"),
        role,
      ),
      h("div", { class: "bar" }, counter, h("div", { class: "actions" }, previous, next)),
    );
    section.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
    const show = () => {
      const needle = search.value.trim().toLowerCase();
      const matching = peers.filter(
        (peer) => (!needle || ((peer.info && peer.info.name) || "").toLowerCase().includes(needle)) && (!role.value || peer.role === role.value),
      );
      const pages = Math.max(1, Math.ceil(matching.length / PEERS_PER_PAGE));
      page = Math.min(page, pages - 1);
      const shown = matching.slice(page * PEERS_PER_PAGE, (page + 1) * PEERS_PER_PAGE);
      counter.textContent = matching.length
        ? `Showing ${page * PEERS_PER_PAGE + 1}–${page * PEERS_PER_PAGE + shown.length} of ${matching.length} (page ${page + 1} of ${pages})`
        : `No match among ${peers.length}`;
      previous.disabled = page === 0;
      next.disabled = page >= pages - 1;
      renderInto(list, shown, (rows) =>
        table(
          "Peers",
          ["Name", "Role", "User", "Joined", "Tracks", "Actions"],
          rows.map((peer) => {
            const name = (peer.info && peer.info.name) || peer.peer_id;
            const userId = peer.info && peer.info.user_id;
            const tracks = Object.values(peer.tracks || {});
            return h(
              "tr",
              {},
              h("td", {}, name),
              h("td", {}, peer.role),
              h("td", {}, userId || ""),
              h("td", {}, time(peer.joined_at)),
              h("td", {}, tracks.length ? tracks.map((t) => `${t.type}${t.mute ? " (muted)" : ""}`).join(", ") : "none"),
              h(
                "td",
                { class: "actions" },
                tracks.length ? act("Mute", status, async () => (await api.mutePeer(roomId, peer.peer_id), `Asked ${name} to mute`), load, { "aria-label": `Mute ${name}`, dataset: { key: `mute-${peer.peer_id}` } }) : null,
                act("Remove", status, async () => (await api.removePeer(roomId, peer.peer_id, "removed by the producer"), `Removed ${name}`), load, { "aria-label": `Remove ${name}`, dataset: { key: `rm-${peer.peer_id}` } }),
                userId ? act("Ban", status, async () => (await api.ban(roomId, userId, "banned from the console"), `Banned ${name}`), load, { class: "danger", "aria-label": `Ban ${name}`, dataset: { key: `ban-${peer.peer_id}` } }) : null,
              ),
            );
          }),
          "No peers match.",
        ),
      );
    };
    search.addEventListener("input", () => {
      page = 0;
      show();
    });
    role.addEventListener("change", () => {
      page = 0;
      show();
    });
    previous.addEventListener("click", () => {
      page -= 1;
      show();
    });
    next.addEventListener("click", () => {
      page += 1;
      show();
    });
    const bansBox = h("div", { class: "list" });
    section.append(h("h4", {}, "Bans"), bansBox);
    const load = async () => {
      try {
        peers = (await api.peers(roomId)).peers || [];
        const roles = [...new Set(peers.map((peer) => peer.role))].sort();
        const have = [...role.options].slice(1).map((option) => option.value);
        if (JSON.stringify(have) !== JSON.stringify(roles)) {
          const chosen = role.value;
          role.replaceChildren(h("option", { value: "" }, "All roles"), ...roles.map((name) => h("option", { value: name }, name)));
          role.value = roles.includes(chosen) ? chosen : "";
        }
        show();
      } catch (error) {
        status.fail(error);
      }
      await fill(bansBox, status, () => api.bans(roomId), (answer) =>
        table(
          "Bans",
          ["User", "Until", "Reason", "By", ""],
          (answer.bans || []).map((ban) =>
            h(
              "tr",
              {},
              h("td", {}, ban.user_id),
              h("td", {}, ban.until ? dateTime(ban.until) : "end of session"),
              h("td", {}, ban.reason || ""),
              h("td", {}, who(ban.banned_by)),
              h("td", {}, act("Unban", status, async () => (await api.unban(roomId, ban.user_id), `Unbanned ${ban.user_id}`), load, { "aria-label": `Unban ${ban.user_id}`, dataset: { key: `unban-${ban.user_id}` } })),
            ),
          ),
          "Nobody is banned.",
        ),
      );
    };
    return load;
  },

  held(roomId, section) {
    const { status, list } = panelFrame(section, "Held messages", h("p", { class: "muted" }, "Messages settings.chat.hold kept back; nobody sees them until approved."));
    const load = () =>
      fill(list, status, () => api.held(roomId), (answer) => {
        const messages = answer.messages || [];
        if (!messages.length) return h("p", { class: "muted" }, "No held messages.");
        return h(
          "ol",
          { class: "chat" },
          messages.map((message) => {
            const id = message.message_id;
            const name = who(message.sender);
            return h(
              "li",
              {},
              h("div", { class: "meta" }, h("time", {}, time(message.timestamp)), " ", h("strong", {}, name)),
              h("p", { class: "text" }, message.info ? message.info.message : ""),
              h(
                "div",
                { class: "actions" },
                act("Approve", status, async () => (await api.approve(roomId, id), `Approved ${name}'s message`), load, { "aria-label": `Approve message from ${name}`, dataset: { key: `ok-${id}` } }),
                act("Reject", status, async () => (await api.reject(roomId, id, "rejected by the producer"), `Rejected ${name}'s message`), load, { class: "danger", "aria-label": `Reject message from ${name}`, dataset: { key: `no-${id}` } }),
              ),
            );
          }),
        );
      });
    return load;
  },

  stage(roomId, section) {
    const { status, list } = panelFrame(section, "Call-in queue");
    const blockedBox = h("div", { class: "list" });
    section.append(h("h4", {}, "Blocked callers"), blockedBox);
    const load = () =>
      fill(list, status, () => api.stage(roomId), (answer) => [
        table(
          "Waiting callers",
          ["#", "Caller", "Note", "Asked", "Actions"],
          (answer.requests || []).map((request) => {
            const name = who(request.peer) || request.user_id;
            return h(
              "tr",
              {},
              h("td", { class: "num" }, request.position ?? ""),
              h("td", {}, name, h("span", { class: "muted" }, ` (${request.user_id})`)),
              h("td", {}, request.note || ""),
              h("td", {}, time(request.requested_at)),
              h(
                "td",
                { class: "actions" },
                act("Invite", status, async () => (await api.invite(roomId, request.request_id), `Invited ${name} on stage`), load, { "aria-label": `Invite ${name} on stage`, dataset: { key: `inv-${request.request_id}` } }),
                act("Decline", status, async () => (await api.decline(roomId, request.request_id), `Declined ${name}`), load, { "aria-label": `Decline ${name}`, dataset: { key: `dec-${request.request_id}` } }),
                act("Block", status, async () => (await api.block(roomId, request.user_id), `Blocked ${name} from the queue`), load, { class: "danger", "aria-label": `Block ${name} from the queue`, dataset: { key: `blk-${request.request_id}` } }),
              ),
            );
          }),
          "Nobody is waiting.",
        ),
        h("p", { class: "muted" }, `${answer.total ?? 0} waiting`),
        (() => {
          renderInto(blockedBox, answer.blocked || [], (blocked) =>
            table(
              "Blocked callers",
              ["User", "Until", ""],
              blocked.map((block) =>
                h(
                  "tr",
                  {},
                  h("td", {}, block.user_id),
                  h("td", {}, block.until ? dateTime(block.until) : "end of session"),
                  h("td", {}, act("Unblock", status, async () => (await api.unblock(roomId, block.user_id), `Unblocked ${block.user_id}`), load, { "aria-label": `Unblock ${block.user_id}`, dataset: { key: `ub-${block.user_id}` } })),
                ),
              ),
              "Nobody is blocked.",
            ),
          );
          return null;
        })(),
      ]);
    return load;
  },

  reports(roomId, section) {
    const { status, list } = panelFrame(section, "Open reports");
    const load = () =>
      fill(list, status, () => api.reports(roomId), (answer) =>
        table(
          "Open reports",
          ["Target", "Reason", "Reported by", "At", "Resolve"],
          (answer.reports || []).map((report) => {
            const target = report.target || {};
            const note = h("input", { type: "text", id: `note-${report.report_id}`, maxlength: "256", placeholder: "note (optional)", dataset: { key: `note-${report.report_id}` } });
            const what = `${target.type || "?"} ${target.id || target.message_id || target.question_id || target.peer_id || ""}`;
            return h(
              "tr",
              {},
              h("td", {}, what, target.message && target.message.info ? h("div", { class: "muted" }, `“${target.message.info.message}”`) : null),
              h("td", {}, report.reason),
              h("td", {}, who(report.reported_by)),
              h("td", {}, time(report.at)),
              h(
                "td",
                { class: "actions" },
                h("label", { for: `note-${report.report_id}`, class: "sr-only" }, `Note for report ${report.report_id}`),
                note,
                act("Resolve", status, async () => (await api.resolve(roomId, report.report_id, note.value.trim()), `Resolved report ${report.report_id}`), load, { "aria-label": `Resolve report ${report.report_id}`, dataset: { key: `res-${report.report_id}` } }),
              ),
            );
          }),
          "No open reports.",
        ),
      );
    return load;
  },

  questions(roomId, section) {
    const state = h("select", { id: "q-state" }, ["open", "answered", "hidden"].map((name) => h("option", { value: name }, name)));
    const { status, list } = panelFrame(section, "Questions", h("form", { class: "inline" }, h("label", { for: "q-state" }, "Show"), state));
    section.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
    const update = (question, change, done) =>
      act(done[0], status, async () => (await api.updateQuestion(roomId, question.question_id, change), done[1]), load, { "aria-label": `${done[0]}: ${question.text.slice(0, 40)}`, dataset: { key: `${done[0]}-${question.question_id}` } });
    const load = () =>
      fill(list, status, () => api.questions(roomId, state.value), (answer) =>
        table(
          "Questions",
          ["Score", "Question", "Asked by", "Actions"],
          (answer.questions || []).map((question) =>
            h(
              "tr",
              {},
              h("td", { class: "num" }, question.score ?? ""),
              h("td", {}, question.pinned ? h("span", { class: "badge" }, "pinned") : null, " ", question.text),
              h("td", {}, who(question.asked_by)),
              h(
                "td",
                { class: "actions" },
                question.state !== "answered" ? update(question, { state: "answered" }, ["Answered", "Marked answered"]) : null,
                update(question, { pinned: !question.pinned }, question.pinned ? ["Unpin", "Unpinned"] : ["Pin", "Pinned"]),
                question.state !== "hidden" ? update(question, { state: "hidden" }, ["Hide", "Hidden"]) : null,
                question.state !== "open" ? update(question, { state: "open" }, ["Reopen", "Reopened"]) : null,
              ),
            ),
          ),
          `No ${state.value} questions.`,
        ),
      );
    state.addEventListener("change", load);
    return load;
  },

  polls(roomId, section) {
    const title = h("input", { type: "text", id: "poll-title", required: true, maxlength: "200" });
    const question = h("input", { type: "text", id: "poll-question", required: true, maxlength: "1024" });
    const options = h("textarea", { id: "poll-options", rows: "3", required: true });
    const known = h("input", { type: "text", id: "poll-id", pattern: "[A-Za-z0-9_-]{1,64}" });
    const form = h(
      "form",
      { class: "stack", id: "poll-form" },
      h("label", { for: "poll-title" }, "Title"),
      title,
      h("label", { for: "poll-question" }, "Question"),
      question,
      h("label", { for: "poll-options" }, "Options, one per line (2–10)"),
      options,
      h("button", { type: "submit" }, "Create poll"),
    );
    const open = h("form", { class: "inline" }, h("label", { for: "poll-id" }, "Poll id"), known, h("button", { type: "submit" }, "Show poll"));
    const { status, list } = panelFrame(section, "Polls", form, open);
    // The room's polls (GET polls, newest first) and any opened by id: id → what is shown.
    const polls = (window.consolePolls = window.consolePolls || {});
    const mine = (polls[roomId] = polls[roomId] || {});
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const choices = options.value.split("\n").map((line) => line.trim()).filter(Boolean);
      if (choices.length < 2 || choices.length > 10) {
        status.fail(new Error("Options: give 2 to 10, one per line"));
        return;
      }
      try {
        const answer = await api.createPoll(roomId, {
          title: title.value.trim(),
          type: "poll",
          questions: [{ question: { text: question.value.trim(), type: "single-choice" }, options: choices.map((text) => ({ text })) }],
        });
        mine[answer.poll_id] = { title: title.value.trim(), question: question.value.trim(), options: choices, state: "created", results: null };
        status.ok(`Created poll ${answer.poll_id}`);
        form.reset();
        load();
      } catch (error) {
        status.fail(error);
      }
    });
    open.addEventListener("submit", (event) => {
      event.preventDefault();
      const id = known.value.trim();
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) {
        status.fail(new Error("Poll id: letters, digits, _ and -, up to 64"));
        return;
      }
      mine[id] = mine[id] || { title: "", results: null };
      load();
    });
    const load = async () => {
      try {
        const listed = await api.listPolls(roomId);
        for (const info of listed.polls || []) {
          const first = (info.questions || [])[0];
          mine[info.poll_id] = Object.assign(mine[info.poll_id] || { results: null }, {
            title: info.title || "",
            state: info.state,
            created: info.created_at,
            question: first ? first.text : "",
            options: first ? (first.options || []).map((option) => option.text) : [],
          });
        }
      } catch (error) {
        status.fail(error);
      }
      for (const id of Object.keys(mine)) {
        try {
          mine[id].results = await api.pollResults(roomId, id);
          mine[id].error = null;
        } catch (error) {
          mine[id].error = errorText(error);
        }
      }
      renderInto(list, mine, (all) => {
        // Newest first, as GET polls lists them; one opened by id and not listed, first.
        const ids = Object.keys(all).sort((a, b) => (all[b].created ?? Infinity) - (all[a].created ?? Infinity));
        if (!ids.length) return h("p", { class: "muted" }, "No polls yet: create one.");
        return ids.map((id) => {
          const poll = all[id];
          const result = poll.results;
          return h(
            "article",
            { class: "card" },
            h("h4", {}, poll.title || id, poll.state ? h("span", { class: "badge" }, poll.state) : null, h("span", { class: "muted" }, ` · ${id}`)),
            poll.question ? h("p", {}, poll.question) : null,
            h(
              "div",
              { class: "actions" },
              act("Start", status, async () => ((mine[id].state = (await api.startPoll(roomId, id))?.state || "started"), `Started poll ${poll.title || id}`), load, { "aria-label": `Start poll ${id}`, dataset: { key: `start-${id}` } }),
              act("Stop", status, async () => ((mine[id].state = (await api.stopPoll(roomId, id))?.state || "stopped"), `Stopped poll ${poll.title || id}`), load, { "aria-label": `Stop poll ${id}`, dataset: { key: `stop-${id}` } }),
            ),
            poll.error ? h("p", { class: "error" }, poll.error) : null,
            result
              ? h(
                  "div",
                  {},
                  h("p", { class: "muted" }, `${result.user_count ?? 0} voted of ${result.max_user ?? "?"}`),
                  (result.questions || []).map((q) =>
                    h("ul", { class: "results", "aria-label": `Question ${q.question} results` }, (q.options || []).map((count, index) => h("li", {}, `${(poll.options && poll.options[index]) || `Option ${index + 1}`}: ${count}`))),
                  ),
                )
              : null,
          );
        });
      });
    };
    return load;
  },

  stream(roomId, section) {
    const buttons = h("div", { class: "actions" });
    const { status, list } = panelFrame(section, "Stream", buttons);
    for (const state of ["live", "ended"]) {
      buttons.append(act(state === "live" ? "Set live" : "Set ended", status, async () => (await api.setStream(roomId, state), `Stream: ${state}`), () => load()));
    }
    const load = () =>
      fill(list, status, () => api.stream(roomId), (stream) =>
        stream
          ? h(
              "dl",
              { class: "facts" },
              [
                ["State", stream.state || "—"],
                ["Running", stream.running ? "yes" : "no"],
                ["Starts at", dateTime(stream.starts_at) || "—"],
                ["Started", dateTime(stream.started_at) || "—"],
                ["Stopped", dateTime(stream.stopped_at) || "—"],
                ["VOD", stream.vod_url || "—"],
              ].map(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]),
            )
          : h("p", { class: "muted" }, "No stream scheduled or started."),
      );
    return load;
  },

  audit(roomId, section) {
    const { status, list } = panelFrame(section, "Audit log", h("p", { class: "muted" }, "Every moderation act of this session, oldest first."));
    const entries = [];
    let after = null;
    const load = async () => {
      try {
        for (let pages = 0; pages < 10; pages += 1) {
          const answer = await api.audit(roomId, after);
          entries.push(...(answer.entries || []));
          if (answer.entries && answer.entries.length) after = answer.entries[answer.entries.length - 1].seq;
          if (answer.next === null || answer.next === undefined) break;
          after = answer.next;
        }
        renderInto(list, entries.length, () =>
          table(
            "Audit log",
            ["#", "At", "Who", "Action", "Target", "Details"],
            entries.map((entry) =>
              h(
                "tr",
                {},
                h("td", { class: "num" }, entry.seq),
                h("td", {}, time(entry.at)),
                h("td", {}, who(entry.actor)),
                h("td", {}, h("code", {}, entry.action)),
                h("td", {}, Object.entries(entry.target || {}).map(([key, value]) => `${key}: ${value}`).join(", ")),
                h("td", {}, Object.entries(entry.details || {}).map(([key, value]) => `${key}: ${typeof value === "object" ? JSON.stringify(value) : value}`).join(", ")),
              ),
            ),
            "Nothing yet.",
          ),
        );
      } catch (error) {
        status.fail(error);
      }
    };
    return load;
  },
};

showTokenState();
route();
