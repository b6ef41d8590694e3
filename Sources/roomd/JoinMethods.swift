/// The calls `roomd join` knows by name, with their params (`?`: optional)
/// and what they do, as docs/openrpc.json has them; `help` and `--help`
/// print this list. CommandLineTests checks that it names every call of
/// docs/openrpc.json, so a method added to the protocol fails a test until
/// it is listed here too.
enum JoinMethods {
    struct Entry {
        var method: String
        var usage: String
        var summary: String
    }

    static let calls: [Entry] = [
        Entry(
            method: "join",
            usage: "join {token, name?, data?, room_id?, peer_id?}",
            summary: "Join the token's room (or resume a peer with peer_id)"
        ),
        Entry(
            method: "leave",
            usage: "leave {reason?}",
            summary: "Leave the room; the connection is closed with 1000 after the answer"
        ),
        Entry(method: "peer-update", usage: "peer-update {name?, data?}", summary: "Change one's name and/or metadata"),
        Entry(
            method: "broadcast",
            usage: "broadcast {info, peer_id?, roles?}",
            summary: "Send a chat message to the room, one peer, or roles"
        ),
        Entry(
            method: "ping",
            usage: "ping {timestamp?}",
            summary: "Liveness and clock; no join needed, not rate limited"
        ),
        Entry(
            method: "track-add",
            usage: "track-add {type, track_id?, source?, mute?, description?}",
            summary: "Publish a track (state only; roomd carries no media)"
        ),
        Entry(
            method: "track-update",
            usage: "track-update {track_id, mute?, description?}",
            summary: "Change one's own track's mute or description"
        ),
        Entry(method: "track-remove", usage: "track-remove {track_id}", summary: "Remove one's own track"),
        Entry(
            method: "role-change-request",
            usage: "role-change-request {role, requested_for?, roles?, force?}",
            summary: "Change a peer's role (polite or forced), or every peer of some roles (bulk)"
        ),
        Entry(method: "role-change", usage: "role-change {token}", summary: "Accept a polite role-change request"),
        Entry(
            method: "role-change-reject",
            usage: "role-change-reject {token}",
            summary: "Reject a polite role-change request"
        ),
        Entry(
            method: "track-update-request",
            usage: "track-update-request {requested_for, track_id, mute}",
            summary: "Mute (enforced) or ask to unmute another peer's track"
        ),
        Entry(
            method: "change-track-mute-state-request",
            usage: "change-track-mute-state-request {value, roles?, type?, source?}",
            summary: "Mute, or ask to unmute, the matching tracks of every other peer"
        ),
        Entry(
            method: "peer-leave-request",
            usage: "peer-leave-request {requested_for, reason?}",
            summary: "Remove a peer (closed with 4001)"
        ),
        Entry(
            method: "end-room",
            usage: "end-room {reason?, lock?}",
            summary: "End the room for everyone (closed with 4002), optionally locking its id"
        ),
        Entry(
            method: "group-join",
            usage: "group-join {name}",
            summary: "Join a group (\"_handraise\" is the hand-raise group)"
        ),
        Entry(method: "group-leave", usage: "group-leave {name}", summary: "Leave a group"),
        Entry(
            method: "group-add",
            usage: "group-add {name, peer_id}",
            summary: "Add a peer to a group (changeRole unless peer_id is one's own)"
        ),
        Entry(
            method: "group-remove",
            usage: "group-remove {name, peer_id}",
            summary: "Remove a peer from a group (changeRole unless peer_id is one's own)"
        ),
        Entry(
            method: "audio-level",
            usage: "audio-level {levels}",
            summary: "Report levels of one's own audio tracks (for active-speakers)"
        ),
        Entry(
            method: "find-peer",
            usage: "find-peer {role?, group?, limit?}",
            summary: "List the room's peers matching role/group, paged"
        ),
        Entry(
            method: "peer-iter-next",
            usage: "peer-iter-next {iterator, limit?}",
            summary: "The next page of a find-peer iterator"
        ),
        Entry(
            method: "preview",
            usage: "preview {token, room_id?}",
            summary: "join's checks without joining: the room and the policy the token would get"
        ),
        Entry(
            method: "set-metadata",
            usage: "set-metadata {key, value}",
            summary: "Set (or with null delete) a session-store key"
        ),
        Entry(
            method: "get-metadata",
            usage: "get-metadata {key?}",
            summary: "Read one session-store key, or every key with a value"
        ),
        Entry(
            method: "listen-metadata-change",
            usage: "listen-metadata-change {keys}",
            summary: "Choose the session-store keys whose changes are pushed (on-metadata-change)"
        ),
        Entry(
            method: "poll-info-set",
            usage: "poll-info-set {title, type, poll_id?, duration?, anonymous?, visibility?, vote?, responses?}",
            summary: "Create a poll, or replace a created poll's info"
        ),
        Entry(
            method: "poll-questions-set",
            usage: "poll-questions-set {poll_id, questions}",
            summary: "Replace every question of a created poll"
        ),
        Entry(method: "poll-info-get", usage: "poll-info-get {poll_id}", summary: "A poll's PollInfo"),
        Entry(
            method: "poll-questions-get",
            usage: "poll-questions-get {poll_id, index?, count?}",
            summary: "A page of a poll's questions"
        ),
        Entry(method: "poll-start", usage: "poll-start {poll_id}", summary: "Start a created poll"),
        Entry(method: "poll-stop", usage: "poll-stop {poll_id}", summary: "Stop a started poll"),
        Entry(
            method: "poll-response",
            usage: "poll-response {poll_id, responses}",
            summary: "Vote: answer (or skip) questions of a started poll"
        ),
        Entry(method: "poll-list", usage: "poll-list {state?}", summary: "The polls the caller may read, newest first"),
        Entry(method: "poll-result", usage: "poll-result {poll_id}", summary: "A poll's counts"),
        Entry(
            method: "poll-responses",
            usage: "poll-responses {poll_id, self?, index?, count?}",
            summary: "A page of a poll's responses (one's own with self:true)"
        ),
        Entry(
            method: "poll-leaderboard",
            usage: "poll-leaderboard {poll_id?, offset?, count?}",
            summary: "A quiz's leaderboard, or (without poll_id, 1.2) the session's"
        ),
        Entry(
            method: "poll-answer-set",
            usage: "poll-answer-set {poll_id, answers}",
            summary: "Set or correct a stopped quiz's answers (pollWrite); scores are computed again"
        ),
        Entry(
            method: "hls-start",
            usage: "hls-start {variants?}",
            summary: "Start the room's HLS live stream (state only)"
        ),
        Entry(method: "hls-stop", usage: "hls-stop", summary: "Stop the room's HLS live stream"),
        Entry(
            method: "hls-timed-metadata",
            usage: "hls-timed-metadata {metadata_objs}",
            summary: "Add HLS timed-metadata cues"
        ),
        Entry(
            method: "chat-history",
            usage: "chat-history {before?, limit?}",
            summary: "A page of the room's chat history, oldest first"
        ),
        Entry(
            method: "message-delete",
            usage: "message-delete {message_id}",
            summary: "Delete a message of the history: one's own (same user_id), or any with moderateChat"
        ),
        Entry(method: "chat-clear", usage: "chat-clear", summary: "Empty the room's chat history (moderateChat)"),
        Entry(
            method: "message-pin",
            usage: "message-pin {message_id}",
            summary: "Pin a message of the history, or unpin with null (moderateChat)"
        ),
        Entry(
            method: "react",
            usage: "react {target, type, count?}",
            summary: "React to a message of the history, or tap the stream or a contestant"
        ),
        Entry(
            method: "unreact",
            usage: "unreact {target, type}",
            summary: "Take the caller's reaction of a type off a message"
        ),
        Entry(
            method: "reactions-get",
            usage: "reactions-get {targets}",
            summary: "The reaction counts of up to 100 targets, with the caller's own"
        ),
        Entry(method: "question-add", usage: "question-add {text}", summary: "Ask a question"),
        Entry(
            method: "question-vote",
            usage: "question-vote {question_id, vote}",
            summary: "Vote on a question: one vote per user, replaced by a later one"
        ),
        Entry(
            method: "question-list",
            usage: "question-list {state?, order?, offset?, limit?}",
            summary: "A page of questions, top or new"
        ),
        Entry(
            method: "question-update",
            usage: "question-update {question_id, state?, pinned?}",
            summary: "Answer, hide, reopen or pin a question (moderateChat; the asker may hide its own)"
        ),
        Entry(
            method: "question-delete",
            usage: "question-delete {question_id}",
            summary: "Delete a question: the asker or moderateChat"
        ),
        Entry(
            method: "peer-ban",
            usage: "peer-ban {user_id?, peer_id?, duration_s?, reason?}",
            summary: "Ban a user (by user_id, or the user of peer_id) from the room session"
        ),
        Entry(method: "peer-unban", usage: "peer-unban {user_id}", summary: "Lift a user's ban"),
        Entry(
            method: "chat-ban",
            usage: "chat-ban {user_id?, peer_id?, duration_s?}",
            summary: "Silence a user's chat: it stays and watches"
        ),
        Entry(method: "chat-unban", usage: "chat-unban {user_id}", summary: "End a user's chat ban"),
        Entry(
            method: "chat-state",
            usage: "chat-state {paused?, slow_mode_s?}",
            summary: "Pause the chat, set slow mode"
        ),
        Entry(
            method: "report",
            usage: "report {reason, message_id?, question_id?, peer_id?}",
            summary: "Report a message, a question or a peer to the moderators"
        ),
    ]

    /// The shorthands: what they are short for, in the same one-line form.
    static let aliases: [(alias: String, meaning: String)] = [
        ("hand", "raise one's hand: group-join {\"name\":\"_handraise\"}"),
        ("unhand", "lower it: group-leave {\"name\":\"_handraise\"}"),
        ("invite PEER ROLE", "a polite role change: role-change-request {\"requested_for\":PEER,\"role\":ROLE}"),
        ("accept", "accept the last invitation: role-change {\"token\":<the last on-role-change-request's>}"),
        ("reject", "reject it: role-change-reject {\"token\":…}"),
        ("chat TEXT", "send TEXT to the room: broadcast {\"info\":{\"message\":TEXT,\"type\":\"chat\"}}"),
        ("me", "print one's own peer id, role and room"),
        ("help", "this list"),
    ]

    /// The list `help` and `--help` print: each call's usage, its summary on the next line.
    static var helpText: String {
        var lines = ["Calls (type `method {json params}`; params marked ? are optional):"]
        for call in calls { lines += ["  " + call.usage, "      " + call.summary] }
        lines.append("Shorthands:")
        for alias in aliases { lines += ["  " + alias.alias, "      " + alias.meaning] }
        return lines.joined(separator: "\n")
    }
}
