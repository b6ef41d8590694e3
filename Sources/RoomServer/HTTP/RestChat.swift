import RoomModel
import RoomProtocol
import RoomWire

/// REST of the chat (1.3, PROTOCOL.md section 32), under
/// `/v2/active-rooms/{room_id}`: `GET chat?before=&limit=`, `DELETE
/// chat/{message_id}`, `POST chat/pin {message_id|null}`, `POST chat/clear`,
/// `POST chat/state {paused?, slow_mode_s?}`; the chat bans (`POST chat-bans
/// {user_id, duration_s?, shadow?}`, `DELETE chat-bans/{user_id}`, `GET
/// chat-bans`); the held messages (`GET held`, `POST
/// held/{message_id}/approve|reject`). Each calls the model action its
/// WebSocket call calls, as the server PeerRef (a moderator: it sees shadowed
/// messages), with the same pushes and errors.
extension RestAPI {
    /// The chat's routes; nil when none matches (404).
    func chat(
        _ roomID: RoomID,
        _ group: String,
        _ rest: ArraySlice<String>,
        _ request: HTTPRequest
    ) throws(RoomError) -> HTTPResponse? {
        let parts = Array(rest)
        switch (group, request.method, parts.count) {
        case ("chat", .get, 0): return try chatHistory(roomID, request)
        case ("chat", .delete, 1): return try deleteMessage(roomID, parts[0])
        case ("chat", .post, 1) where parts[0] == "pin": return try pinMessage(roomID, try body(request))
        case ("chat", .post, 1) where parts[0] == "clear": return try clearChat(roomID)
        case ("chat", .post, 1) where parts[0] == "state": return try setChatState(roomID, try body(request))
        case ("chat-bans", .get, 0): return try listChatBans(roomID, request)
        case ("chat-bans", .post, 0): return try chatBan(roomID, try body(request))
        case ("chat-bans", .delete, 1): return try chatUnban(roomID, UserID(parts[0]))
        case ("held", .get, 0): return try listHeld(roomID)
        case ("held", .post, 2) where parts[1] == "approve": return try approveHeld(roomID, parts[0])
        case ("held", .post, 2) where parts[1] == "reject": return try rejectHeld(roomID, parts[0], try body(request))
        default: return nil
        }
    }

    /// The most JSON of messages (or other items) one list answers: a
    /// quarter of `max_outbound_bytes`, as the WebSocket's chat answers.
    var listBudget: Int { max(1, registry.settings.limits.maxOutboundBytes / 4) }

    /// `{messages:[Message…], more, pinned: Message|null, state: {paused,
    /// slow_mode_s}}`: `chat-history`'s answer (the newest `limit`, 1–200,
    /// default 50, before `before`; shadowed ones marked), with what a
    /// console shows beside it: the pinned message and the chat's state.
    private func chatHistory(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let limit = try Self.queryInt(request, "limit", in: 1...200) ?? 50
        let page: (messages: [ChatMessage], more: Bool)
        do throws(RoomError) {
            page = try registry.chatHistory(in: room, before: request.query["before"], limit: limit)
        } catch  where error.code == .messageNotFound {
            return cursorGone(error)
        }
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("messages")
                let cut = w.chatMessages(page.messages, within: budget, showShadow: true)
                w.field("more", page.more || cut)
                w.key("pinned")
                w.chatMessage(room.chat.pinned, showShadow: true)
                w.key("state")
                w.object { w in
                    w.field("paused", room.chatControls.paused)
                    w.field("slow_mode_s", room.chatControls.slowModeSeconds)
                }
            }
        )
    }

    private func deleteMessage(_ roomID: RoomID, _ id: String) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.deleteMessage(id, by: .server, in: try room(roomID)))
        logger.info("message deleted", metadata: ["room": "\(roomID)", "message": "\(id.prefix(64))", "by": "rest"])
        return .json(200, [:])
    }

    private func pinMessage(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let id = try params.requiredStringOrNull("message_id", null: "null unpins")
        fanOut.fanOut(try registry.pinMessage(id, by: .server, in: try room(roomID)))
        logger.info("message pinned", metadata: ["room": "\(roomID)", "pinned": "\(id != nil)", "by": "rest"])
        return .json(200, [:])
    }

    private func clearChat(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let (deliveries, dropped) = try registry.clearChat(by: .server, in: try room(roomID)).parts()
        graveyard.bury(consume dropped)  // freed off the service thread, as `chat-clear`'s
        fanOut.fanOut(deliveries)
        logger.info("chat cleared", metadata: ["room": "\(roomID)", "by": "rest"])
        return .json(200, [:])
    }

    /// `{paused, slow_mode_s}`: the chat's state after the change.
    private func setChatState(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let paused = try params.bool("paused")
        let slow = try params.int("slow_mode_s", in: ChatControls.slowModeRange)
        fanOut.fanOut(try registry.setChatState(in: room, by: .server, paused: paused, slowModeSeconds: slow))
        logger.info(
            "chat state set",
            metadata: [
                "room": "\(roomID)", "paused": "\(room.chatControls.paused)",
                "slow_mode_s": "\(room.chatControls.slowModeSeconds)", "by": "rest",
            ]
        )
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.field("paused", room.chatControls.paused)
                w.field("slow_mode_s", room.chatControls.slowModeSeconds)
            }
        )
    }

    private func chatBan(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let user = try params.requiredUserID("user_id")
        if user.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        let duration = try params.int("duration_s", in: RoomRegistry.banDurationRange)
        let shadow = try params.bool("shadow") ?? false
        fanOut.fanOut(try registry.chatBan(user, in: room, by: .server, durationSeconds: duration, shadow: shadow))
        logger.info(
            "user chat-banned",
            metadata: [
                "room": "\(roomID)", "user": "\(user)", "duration_s": "\(duration ?? 0)", "shadow": "\(shadow)",
                "by": "rest",
            ]
        )
        return .json(200, [:])
    }

    private func chatUnban(_ roomID: RoomID, _ user: UserID) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.chatUnban(user, in: try room(roomID), by: .server))
        logger.info("user chat-unbanned", metadata: ["room": "\(roomID)", "user": "\(user)", "by": "rest"])
        return .json(200, [:])
    }

    /// `{chat_bans:[{user_id, until|null, shadow, banned_by}], total, more?}`:
    /// the chat bans in force, oldest first, from `offset` (0), at most
    /// `limit` (1–1,000, default 100), cut to the list budget (`more: true`).
    private func listChatBans(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let offset = try Self.queryInt(request, "offset", in: 0...Int.max) ?? 0
        let limit = try Self.queryInt(request, "limit", in: 1...1000) ?? 100
        let now = clock.nowMillis()
        let bans = room.chatControls.allChatBans.filter { ($0.until ?? .max) > now }
        let page = Array(bans.dropFirst(offset).prefix(limit))
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("chat_bans")
                let cut = w.leadingArray(page, within: budget, size: Self.encodedSize) { $0.chatBan($1) }
                w.field("total", bans.count)
                if cut { w.field("more", true) }
            }
        )
    }

    private static func encodedSize(_ ban: ChatControls.ChatBan) -> Int {
        var w = JSONWriter(reserving: 256)
        w.chatBan(ban)
        return w.bytes.count
    }

    /// `{messages:[Message…], more?}` oldest first, as `held-list`.
    private func listHeld(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let held = try registry.heldMessages(in: try room(roomID), by: .server)
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in w.heldMessages(held, within: budget) }
        )
    }

    private func approveHeld(_ roomID: RoomID, _ id: String) throws(RoomError) -> HTTPResponse {
        fanOut.fanOut(try registry.approveHeld(id, by: .server, in: try room(roomID)))
        logger.info(
            "held message approved",
            metadata: ["room": "\(roomID)", "message": "\(id.prefix(64))", "by": "rest"]
        )
        return .json(200, [:])
    }

    private func rejectHeld(_ roomID: RoomID, _ id: String, _ params: Params) throws(RoomError) -> HTTPResponse {
        let reason = try params.string("reason")
        fanOut.fanOut(try registry.rejectHeld(id, reason: reason, by: .server, in: try room(roomID)))
        logger.info(
            "held message rejected",
            metadata: ["room": "\(roomID)", "message": "\(id.prefix(64))", "by": "rest"]
        )
        return .json(200, [:])
    }
}

extension JSONWriter {
    /// `{user_id, until|null, shadow, banned_by: PeerRef}` (REST `GET chat-bans`).
    mutating func chatBan(_ ban: ChatControls.ChatBan) {
        object { w in
            w.field("user_id", ban.userID)
            w.optionalField("until", ban.until)
            w.field("shadow", ban.shadow)
            w.key("banned_by")
            w.actorRef(ban.bannedBy)
        }
    }
}
