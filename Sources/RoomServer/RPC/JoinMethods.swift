import Logging
import RoomModel
import RoomWire

/// `join`, `leave`, `peer-update` and `ping` (PROTOCOL.md sections 4 and 7).
extension Dispatcher {
    static var joinMethods: [String: Method] {
        [
            "join": .open(Dispatcher.join),
            "ping": .open(Dispatcher.ping),
            "leave": .joined(Dispatcher.leave),
            "peer-update": .joined(Dispatcher.peerUpdate),
        ]
    }

    func join(_ params: Params, _ call: inout Call) throws(RoomError) -> [UInt8] {
        let started = ContinuousClock.now
        defer { metrics.joinDuration.record(duration: ContinuousClock.now - started) }
        let token = try params.requiredString("token")
        let name = try params.string("name")
        let data = try params.string("data")
        let roomID = try params.string("room_id").map(RoomID.init)
        let peerID = try params.peerID("peer_id")
        // A resume inside the grace may use a token that expired less than the grace ago (section 23).
        let grace = peerID == nil ? 0 : Double(registry.settings.room.reconnectGraceS)
        let grant = try verifier.verifyApp(token, expiredGrace: grace)
        try homes.admitJoin(grant.roomID)  // a cluster serves a room on its home node only
        // Section 27: a `name` claim is the app's word and wins (the param is then ignored); the
        // param is the user's: trimmed, filtered (40302), and 40908 when a moderating peer has it.
        var joinName = grant.name ?? grant.userID.rawValue
        var nameIsParam = false
        if grant.name == nil, let name {
            joinName = try RoomRegistry.trimmedName(name)
            try registry.checkName(joinName)
            nameIsParam = true
        } else if grant.name == nil, !joinName.trimmedOfWhiteSpace.isEmpty {
            joinName = joinName.trimmedOfWhiteSpace  // the user_id default: trimmed only
        }
        let outcome = try registry.join(
            JoinRequest(
                roomID: grant.roomID,
                requestedRoomID: roomID,
                userID: grant.userID,
                roleName: grant.role,
                name: joinName,
                nameIsParam: nameIsParam,
                avatar: grant.avatar,
                attributes: grant.attributes,
                data: data ?? "",
                viewOnly: grant.viewOnly,
                resumePeerID: peerID,
                tokenExpiresAt: grant.expiresAt,
                tokenExpired: grant.expired
            )
        )
        let peer = outcome.peer
        if let replaced = outcome.replacedEndpoint?.connection, replaced !== call.connection {
            replaced.peer = nil
            replaced.close(4003)
        }
        peer.endpoint = call.connection
        call.connection.peer = peer
        call.connection.markJoined()
        // Pushes held during the grace follow the response, in order.
        if let held = outcome.replacedEndpoint?.held { call.after.replay = held.frames }
        logger.info(
            "peer joined",
            metadata: [
                "room": "\(peer.room.id)", "peer": "\(peer.id)", "user": "\(peer.userID)", "role": "\(peer.role.name)",
                "resumed": "\(outcome.resumed)",
            ]
        )
        fanOut(outcome.deliveries)
        let locked = registry.lockedRoomIDs.contains(outcome.room.id)
        return Self.encode { w in
            w.key("peer")
            w.peer(peer, withTracks: true)
            w.key("room")
            w.room(outcome.room, locked: locked)
            w.key("policy")
            w.raw(policies.encoded[peer.role.name]!)
            w.key("peers")
            w.array { w in
                for other in outcome.others { w.peer(other.peer, withTracks: other.withTracks) }
            }
            w.field("resumed", outcome.resumed)
            w.key("chat")
            w.chatOnJoin(
                registry.chatOnJoin(outcome.room, for: peer),
                state: registry.chatState(for: peer),
                within: chatAnswerBudget,
                showShadow: registry.canModerateChat(peer)
            )
            w.stageOnJoin(registry.stageJoinInfo(for: peer))
        }
    }

    func leave(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        _ = try params.string("reason")
        let peer = call.peer
        call.connection.peer = nil
        logger.info(
            "peer left",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "reason": "client request"]
        )
        fanOut(registry.leave(peer, reason: .clientRequest))
        call.after.closeCode = 1000
        return Self.encode { _ in }
    }

    func peerUpdate(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let name = try params.string("name")
        let data = try params.string("data")
        fanOut(try registry.updatePeer(peer, name: name, data: data))
        return Self.encode { w in
            w.key("peer")
            w.peer(peer, withTracks: true)
        }
    }

    func ping(_ params: Params, _ call: inout Call) throws(RoomError) -> [UInt8] {
        let timestamp = params.value("timestamp") ?? .null
        return Self.encode { w in
            w.key("timestamp")
            w.value(timestamp)
            w.field("server_time", clock.nowMillis())
        }
    }
}
