import RoomModel
import RoomProtocol
import RoomWire

/// The call-in queue (PROTOCOL.md section 26).
extension Dispatcher {
    static var stageMethods: [String: Method] {
        [
            "stage-request": .joined(Dispatcher.stageRequest),
            "stage-withdraw": .joined(Dispatcher.stageWithdraw),
            "stage-list": .joined(Dispatcher.stageList),
            "stage-invite": .joined(Dispatcher.stageInvite),
            "stage-decline": .joined(Dispatcher.stageDecline),
            "stage-block": .joined(Dispatcher.stageBlock),
            "stage-unblock": .joined(Dispatcher.stageUnblock),
        ]
    }

    func stageRequest(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let note = try params.string("note")
        // Section 30: the app's hook decides first, and may rewrite the note.
        let limit = registry.settings.stage.noteBytes
        guard
            let rewrite = try hook(
                .stageRequest,
                room: peer.room.id,
                &call.hook,
                on: call.connection,
                ids: call.connection.logMetadata,
                check: { rewrite in
                    guard let note = rewrite.text else { return nil }
                    return note.utf8.count > limit ? "note: over settings.stage.note_bytes" : nil
                },
                data: { w in
                    w.field("room_id", peer.room.id)
                    w.field("session_id", peer.room.sessionID)
                    w.key("peer")
                    w.peerRef(peer)
                    w.field("note", note ?? "")
                }
            )
        else { return [] }  // it waits for its hook
        let (request, deliveries) = try registry.requestStage(by: peer, note: rewrite.text ?? note)
        fanOut(deliveries)
        return Self.encode { w in
            w.key("request")
            request.encode(into: &w)
        }
    }

    func stageWithdraw(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        fanOut(try registry.withdrawStage(by: call.peer))
        return Self.empty
    }

    func stageList(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let status = try params.choice("status", StageStatus.self) ?? .waiting
        let offset = try params.int("offset", in: 0...Int.max) ?? 0
        let limit = try params.int("limit", in: 1...100) ?? 50
        let page = try registry.listStage(
            by: .peer(call.peer),
            in: call.room,
            status: status,
            offset: offset,
            limit: limit
        )
        let budget = chatAnswerBudget
        return Self.encode { w in
            w.key("requests")
            let cut = w.stageRequests(page.requests, within: budget)
            w.field("total", page.total)
            if cut { w.field("more", true) }
        }
    }

    func stageInvite(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let (request, token, effects) = try registry.inviteToStage(
            by: .peer(call.peer),
            in: call.room,
            requestID: try params.requiredString("request_id"),
            role: try params.string("role")
        )
        apply(effects, &call)
        return Self.encode { w in
            w.key("request")
            request.encode(into: &w)
            w.field("token", token)
        }
    }

    func stageDecline(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        fanOut(
            try registry.declineStage(
                by: .peer(call.peer),
                in: call.room,
                requestID: try params.requiredString("request_id"),
                reason: try params.string("reason")
            )
        )
        return Self.empty
    }

    func stageBlock(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        fanOut(
            try registry.blockFromStage(
                by: .peer(call.peer),
                in: call.room,
                userID: try params.requiredUserID("user_id"),
                durationS: try params.int("duration_s", in: RoomRegistry.banDurationRange)
            )
        )
        return Self.empty
    }

    func stageUnblock(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        try registry.unblockFromStage(by: .peer(call.peer), in: call.room, userID: try params.requiredUserID("user_id"))
        return Self.empty
    }
}

extension JSONWriter {
    /// The first of `requests` that fit in `budget` bytes, at least one;
    /// true when some were left out (`stage-list`'s `more`).
    mutating func stageRequests(_ requests: [StageRequest], within budget: Int) -> Bool {
        leadingArray(requests, within: budget, size: \.encodedSize) { $1.encode(into: &$0) }
    }

    /// `join`'s `stage`: `{waiting}` for a moderating peer, `{request}` for
    /// the peer of a waiting or invited request, left out otherwise.
    mutating func stageOnJoin(_ info: RoomRegistry.StageJoinInfo?) {
        switch info {
        case .waiting(let count)?:
            key("stage")
            object { w in w.field("waiting", count) }
        case .request(let request)?:
            key("stage")
            object { w in
                w.key("request")
                request.encode(into: &w)
            }
        case nil: break
        }
    }
}
