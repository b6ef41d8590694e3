import RoomConfig
import RoomProtocol

/// Moderation that holds (1.2, PROTOCOL.md section 22): bans, chat bans,
/// paused chat and slow mode, reports and the word filter. The state is the
/// room session's (`RoomBans`, `ChatControls`, `ReportLog`); the rules that
/// every path that posts obeys are `checkChatRules` and `checkQuestionRules`.
extension RoomRegistry {
    /// The longest `reason` of a ban or a report (41300 past it).
    public static let maxReasonBytes = 256
    /// `duration_s` of a ban or chat ban: one second to a year.
    public static let banDurationRange = 1...31_536_000

    /// `peer`'s chat state now.
    public func chatState(for peer: Peer) -> ChatState {
        chatState(in: peer.room, userID: peer.userID)
    }

    func chatState(in room: Room, userID: UserID) -> ChatState {
        // A shadow chat ban is not the user's to see (section 31).
        let ban = room.chatControls.chatBan(of: userID, now: clock.nowMillis()).flatMap { $0.shadow ? nil : $0 }
        return ChatState(
            paused: room.chatControls.paused,
            slowModeSeconds: room.chatControls.slowModeSeconds,
            chatBanned: ban != nil,
            until: ban?.until
        )
    }

    /// The user a call names by `user_id` or by `peer_id` (exactly one).
    public func bannedUser(userID: UserID?, peerID: PeerID?, in room: Room) throws(RoomError) -> UserID {
        switch (userID, peerID) {
        case (let user?, nil):
            if user.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
            return user
        case (nil, let id?):
            guard let peer = room.peer(id) else {
                throw RoomError(.peerNotFound, "peer_id: peer \"\(id)\" is not in the room")
            }
            return peer.userID
        case (.some, .some): throw .invalidParams("user_id and peer_id: give one, not both")
        case (nil, nil): throw .invalidParams("user_id or peer_id: required")
        }
    }

    // MARK: bans

    /// `peer-ban` / REST `ban` (`removeOthers`): every peer of `userID` is
    /// removed as by `peer-leave-request` (close 4001, `on-peer-leave`
    /// "peer banned"; each gets `on-peer-leave-request` with the reason), and
    /// joins and previews of that user are 40301 until the ban ends.
    public func ban(
        _ userID: UserID,
        in room: Room,
        by initiator: Initiator,
        durationSeconds: Int?,
        reason: String
    ) throws(RoomError) -> Effects {
        try requirePermission(initiator, \.removeOthers, "removeOthers")
        try checkSize(reason, field: "reason", limit: Self.maxReasonBytes)
        if case .peer(let caller) = initiator, caller.userID == userID {
            throw .invalidParams("user_id: a peer cannot ban its own user")
        }
        try checkRank(initiator, over: room.peersInJoinOrder.lazy.filter { $0.userID == userID }, "peer-ban")
        let now = clock.nowMillis()
        let until = durationSeconds.map { now + Int64($0) * 1000 }
        let by = ActorRef(initiator)
        guard room.bans.add(userID, until: until, reason: reason, by: by, now: now) else {
            throw RoomError(.tooMany, "peer-ban: room \"\(room.id)\" holds \(RoomBans.capacity) bans already")
        }
        record(.peerBanned(room: RoomRef(room), userID: userID, until: until, reason: reason, by: by), at: now)
        var effects = Effects()
        for target in room.peersInJoinOrder where target.userID == userID {
            effects.send(.peerLeaveRequest(requestedBy: initiator, reason: reason, roomEnd: false), to: [target])
            effects.disconnects.append(Disconnect(peer: target, reason: .removed))
            effects.deliveries += leave(target, reason: .peerBanned)
        }
        return effects
    }

    /// `peer-unban` / REST `unban` (`removeOthers`): a user without a ban is fine too.
    public func unban(_ userID: UserID, in room: Room, by initiator: Initiator) throws(RoomError) {
        try requirePermission(initiator, \.removeOthers, "removeOthers")
        if userID.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        if room.bans.remove(userID, now: clock.nowMillis()) {
            record(.peerUnbanned(room: RoomRef(room), userID: userID, by: ActorRef(initiator)))
        }
    }

    /// REST `bans`: the bans in force, oldest first.
    public func bans(in room: Room) -> [RoomBans.Ban] {
        room.bans.all(now: clock.nowMillis())
    }

    /// The admission's check (Admission.swift): 40301 while `userID` is banned from `room`.
    func checkBan(of userID: UserID, in room: Room) throws(RoomError) {
        guard let ban = room.bans.ban(of: userID, now: clock.nowMillis()) else { return }
        let reason = ban.reason.isEmpty ? "" : ": \(ban.reason)"
        throw RoomError(.banned, "banned from room \"\(room.id)\"\(reason)")
    }

    // MARK: chat bans and chat state

    /// `chat-ban` (`moderateChat`): only the user's peers get `on-chat-state`
    /// — unless `shadow` (1.3, section 31): the user is not told (its peers
    /// get `on-chat-state` only when what they see changes, a visible chat
    /// ban turned into a shadow one).
    public func chatBan(
        _ userID: UserID,
        in room: Room,
        by initiator: Initiator,
        durationSeconds: Int?,
        shadow: Bool = false
    ) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        try checkRank(initiator, over: room.peersInJoinOrder.lazy.filter { $0.userID == userID }, "chat-ban")
        let now = clock.nowMillis()
        var deliveries = endChatBans(in: room, now: now)  // expired ones free their place (and are told so)
        let until = durationSeconds.map { now + Int64($0) * 1000 }
        let seen = chatState(in: room, userID: userID)
        guard room.chatControls.addChatBan(userID, until: until, shadow: shadow, by: ActorRef(initiator)) else {
            throw RoomError(
                .tooMany,
                "chat-ban: room \"\(room.id)\" holds \(ChatControls.chatBanCapacity) chat bans already"
            )
        }
        timeChatBans(room)
        record(
            .chatBanned(room: RoomRef(room), userID: userID, until: until, shadow: shadow, by: ActorRef(initiator)),
            at: now
        )
        if chatState(in: room, userID: userID) != seen { deliveries += chatStateDeliveries(in: room, toUser: userID) }
        return deliveries
    }

    /// `chat-unban` (`moderateChat`): the user's peers get `on-chat-state` when a chat ban ended.
    public func chatUnban(_ userID: UserID, in room: Room, by initiator: Initiator) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        if userID.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        let seen = chatState(in: room, userID: userID)
        guard room.chatControls.removeChatBan(userID) else { return [] }
        timeChatBans(room)
        // The end of a shadow chat ban changes nothing its user sees: nothing to tell.
        return chatState(in: room, userID: userID) == seen ? [] : chatStateDeliveries(in: room, toUser: userID)
    }

    /// `chat-state` (`moderateChat`): every peer gets `on-chat-state` with its own state.
    public func setChatState(
        in room: Room,
        by initiator: Initiator,
        paused: Bool?,
        slowModeSeconds: Int?
    ) throws(RoomError) -> [Delivery] {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        if paused == nil, slowModeSeconds == nil { throw .invalidParams("paused or slow_mode_s: give at least one") }
        if let paused { room.chatControls.paused = paused }
        if let slowModeSeconds { room.chatControls.setSlowMode(slowModeSeconds) }
        feedState(room)
        let now = clock.nowMillis()
        var unbanned: [Peer] = []
        var banned: [Int64?: [Peer]] = [:]
        for peer in room.peersInJoinOrder {
            if let ban = room.chatControls.chatBan(of: peer.userID, now: now), !ban.shadow {
                banned[ban.until, default: []].append(peer)
            } else {
                unbanned.append(peer)
            }
        }
        let base = ChatState(
            paused: room.chatControls.paused,
            slowModeSeconds: room.chatControls.slowModeSeconds,
            chatBanned: false,
            until: nil
        )
        var deliveries = [Delivery(.chatState(base), to: unbanned)]
        for (until, peers) in banned.sorted(by: { ($0.key ?? .max) < ($1.key ?? .max) }) {
            var state = base
            state.chatBanned = true
            state.until = until
            deliveries.append(Delivery(.chatState(state), to: peers))
        }
        return deliveries.nonEmpty
    }

    /// `on-chat-state` to the peers of `userID`.
    private func chatStateDeliveries(in room: Room, toUser userID: UserID) -> [Delivery] {
        let peers = room.peersInJoinOrder.filter { $0.userID == userID }
        return [Delivery(.chatState(chatState(in: room, userID: userID)), to: peers)].nonEmpty
    }

    /// The room's `ChatBanEnd` is due at its next timed chat ban's end (none without).
    func timeChatBans(_ room: Room) {
        guard let end = room.chatControls.nextChatBanEnd else {
            cancel(room.chatBanEntry)
            room.chatBanEntry = nil
            return
        }
        if room.chatBanEntry.flatMap({ deadlines.deadline(of: $0) }) == end { return }
        cancel(room.chatBanEntry)
        room.chatBanEntry = schedule(ChatBanEnd(room: room), at: end)
    }

    func endChatBans(in room: Room, now: Int64) -> [Delivery] {
        var deliveries: [Delivery] = []
        for ended in room.chatControls.endChatBans(now: now) where !ended.shadow {
            deliveries += chatStateDeliveries(in: room, toUser: ended.userID)
        }
        timeChatBans(room)
        return deliveries
    }

    // MARK: the rules of every path that posts

    /// `broadcast`'s rules, in this order: chat-banned 40302, paused 40302
    /// (to everyone, without `moderateChat`), the word filter 40302 (any
    /// recipient, moderators too), slow mode 42901 (to everyone, without
    /// `moderateChat`). `noteSent` starts the sender's slow-mode clock.
    func checkChatRules(_ sender: Peer, message: String, toEveryone: Bool) throws(RoomError) {
        let room = sender.room
        let now = clock.nowMillis()
        try checkChatBan(sender, now: now)
        let moderator = canModerateChat(sender)
        if toEveryone, room.chatControls.paused, !moderator {
            throw RoomError(.chatClosed, "chat is paused: only moderators may send to everyone")
        }
        if wordFilter.matches(message) {
            throw RoomError(.chatClosed, "info.message: refused by settings.chat.blocked_words")
        }
        try checkLinks(message, field: "info.message")
        let slow = room.chatControls.slowModeSeconds
        if toEveryone, slow > 0, !moderator {
            let wait = room.chatControls.clocks.wait(for: sender.userID, now: now, intervalMs: Int64(slow) * 1000)
            if wait > 0 {
                var error = RoomError(.slowMode, "slow mode: one message to everyone per \(slow) s")
                error.retryAfterMs = wait
                throw error
            }
        }
    }

    /// Whether `peer`'s user is shadow chat-banned now (section 31): its
    /// calls that post are answered as success and seen by few.
    public func isShadowed(_ peer: Peer) -> Bool {
        peer.room.chatControls.chatBan(of: peer.userID, now: clock.nowMillis())?.shadow == true
    }

    /// After a message to everyone passed `checkChatRules`: the sender's slow-mode clock.
    func noteSent(_ sender: Peer) {
        let room = sender.room
        if room.chatControls.slowModeSeconds > 0, !canModerateChat(sender) {
            room.chatControls.clocks.sent(sender.userID, now: clock.nowMillis())
        }
    }

    /// `question-add`'s rules: chat-banned 40302, the word filter 40302.
    func checkQuestionRules(_ sender: Peer, text: String) throws(RoomError) {
        try checkChatBan(sender, now: clock.nowMillis())
        if wordFilter.matches(text) {
            throw RoomError(.chatClosed, "text: refused by settings.chat.blocked_words")
        }
        try checkLinks(text, field: "text")
    }

    /// 40302 when `text` links to a host of `settings.chat.blocked_domains`
    /// or a subdomain of one (section 31): messages, questions and stage
    /// notes, whoever sends them.
    func checkLinks(_ text: String, field: String) throws(RoomError) {
        guard !blockedDomains.isEmpty else { return }
        for host in Links.hosts(in: text) where Links.isBlocked(host, by: blockedDomains) {
            throw RoomError(
                .chatClosed,
                "\(field): a link to \(host.prefix(80)) is refused by settings.chat.blocked_domains"
            )
        }
    }

    /// 40302 while `sender`'s user is chat-banned: every `broadcast`,
    /// `question-add` and `report`, and its own `peer-update` and `group-join`.
    func checkChatBan(_ sender: Peer, now: Int64) throws(RoomError) {
        if let ban = sender.room.chatControls.chatBan(of: sender.userID, now: now), !ban.shadow {
            let until = ban.until.map { " until \($0)" } ?? ""
            throw RoomError(.chatClosed, "chat-banned in this room\(until)")
        }
    }

    /// `join`'s `name` param and a peer's own `peer-update` name: the word filter (40302).
    public func checkName(_ name: String) throws(RoomError) {
        if wordFilter.matches(name) {
            throw RoomError(.chatClosed, "name: refused by settings.chat.blocked_words")
        }
    }

    // MARK: rank

    /// The rank rule (PROTOCOL.md, choices): a peer may not ban, remove or
    /// chat-ban a peer whose role ranks above its own, that is has a lower
    /// `priority` (1 is the highest), when that role moderates (it has
    /// `removeOthers` or `moderateChat`). Peers of roles that do not
    /// moderate, and peers of the same priority, are anyone's to moderate;
    /// the operator (REST, the server) is not ranked. A ban by `user_id`
    /// looks at that user's peers in the room (none: a ban ahead, allowed).
    func checkRank(_ initiator: Initiator, over targets: some Sequence<Peer>, _ method: String) throws(RoomError) {
        guard case .peer(let caller) = initiator else { return }
        for target in targets where Self.outranks(target.role, caller.role) {
            throw RoomError(
                .permissionDenied,
                "\(method): peer \"\(target.id)\" of role \(target.role.name) (priority \(target.role.priority)) "
                    + "ranks above role \(caller.role.name) (priority \(caller.role.priority))"
            )
        }
    }

    /// Whether a peer of `role` is out of reach of a peer of `other`.
    static func outranks(_ role: Role, _ other: Role) -> Bool {
        role.priority < other.priority && (role.permissions.removeOthers || role.permissions.moderateChat)
    }

    // MARK: reports

    /// `report`: every `moderateChat` peer gets `on-report`; one report per
    /// user per target (a repeat answers the first report's id and pushes nothing).
    public func report(
        _ target: ReportTarget,
        reason: String,
        by peer: Peer
    ) throws(RoomError) -> (reportID: String, deliveries: [Delivery]) {
        try peer.requireUnrestricted("report")
        let room = peer.room
        try checkChatBan(peer, now: clock.nowMillis())
        try checkSize(reason, field: "reason", limit: Self.maxReasonBytes)
        switch target.type {
        case .message:
            if room.chat.message(target.id) == nil {
                throw RoomError(.messageNotFound, "message_id: message \"\(target.id)\" is not in the room's history")
            }
        case .question:
            guard let question = room.questions.question(target.id),
                question.state != .hidden || canModerateChat(peer),
                !question.shadowed || canModerateChat(peer) || question.askedBy.userID == peer.userID.rawValue
            else {
                throw RoomError(.questionNotFound, "question_id: question \"\(target.id)\" not found")
            }
        case .peer:
            if room.peer(PeerID(target.id)) == nil {
                throw RoomError(.peerNotFound, "peer_id: peer \"\(target.id)\" is not in the room")
            }
        }
        // A shadow-banned user's report is answered as any is, and goes nowhere (section 31).
        if isShadowed(peer) { return (ids.next(.report), []) }
        if let earlier = room.reports.earlier(user: peer.userID, target: target) { return (earlier, []) }
        let report = Report(
            id: ids.next(.report),
            target: target,
            reason: reason,
            reportedBy: ActorRef(peer),
            at: clock.nowMillis()
        )
        room.reports.insert(user: peer.userID, target: target, id: report.id)
        room.reports.add(report)
        record(.reportCreated(room: RoomRef(room), report: report), at: report.at)
        let moderators = room.peersInJoinOrder.filter(canModerateChat)
        return (report.id, [Delivery(.report(report), to: moderators)].nonEmpty)
    }

    /// The most bytes of a `report-resolve` note (41300 past it).
    public static let maxNoteBytes = 1024

    /// `GET …/reports?status=` (1.3, section 32): the room session's kept
    /// reports of that status, oldest first.
    public func reports(in room: Room, status: ReportStatus) -> [Report] {
        room.reports.all.filter { $0.status == status }
    }

    /// `report-resolve {report_id, note?}` (1.3, section 32; `moderateChat`,
    /// or REST): the report is `resolved`, and every `moderateChat` peer gets
    /// `on-report-update {report}`. An unknown id is 40408, a resolved
    /// report 40904.
    public func resolveReport(
        _ id: String,
        note: String?,
        by initiator: Initiator,
        in room: Room
    ) throws(RoomError) -> (report: Report, deliveries: [Delivery]) {
        try requirePermission(initiator, \.moderateChat, "moderateChat")
        if let note { try checkSize(note, field: "note", limit: Self.maxNoteBytes) }
        guard var report = room.reports.report(id) else {
            throw RoomError(.reportNotFound, "report_id: no report \"\(id)\" in the room's session")
        }
        guard report.status == .open else {
            throw RoomError(.wrongState, "report_id: report \"\(id)\" is resolved already")
        }
        report.status = .resolved
        report.resolvedBy = ActorRef(initiator)
        report.resolvedAt = clock.nowMillis()
        report.note = note
        room.reports.update(report)
        let moderators = room.peersInJoinOrder.filter(canModerateChat)
        return (report, [Delivery(.reportUpdate(report), to: moderators)].nonEmpty)
    }
}

/// The end of a room's next timed chat ban: the bans that ended go, in the
/// order they were made, and their users' peers get `on-chat-state`. One
/// entry per room with timed chat bans (`Room.chatBanEntry`).
struct ChatBanEnd: ModelDeadline {
    static let rank = 4
    let room: Room

    func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
        room.chatBanEntry = nil
        guard registry.rooms[room.id] === room else { return Expired() }
        return Expired(registry.endChatBans(in: room, now: now))
    }
}
