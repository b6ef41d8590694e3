import Foundation
import Logging
import RoomConfig
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
        // Section 30: the app's hook decides first (resumes too); it may give the name, role, attributes.
        var roleName = grant.role
        var attributes = grant.attributes
        let maxNameBytes = registry.settings.limits.maxNameBytes
        let template = registry.template
        let hookName = joinName
        guard
            let rewrite = try hook(
                .join,
                room: grant.roomID,
                &call.hook,
                on: call.connection,
                ids: ["conn": "\(call.connection.id)", "room": "\(grant.roomID)", "user": "\(grant.userID)"],
                user: grant.userID,
                check: { Self.hookJoinProblem($0, template: template, maxNameBytes: maxNameBytes) },
                data: { w in
                    w.field("room_id", grant.roomID)
                    w.field("user_id", grant.userID)
                    w.field("role", grant.role)
                    w.field("name", hookName)
                    w.key("claims")
                    w.value(Self.claims(ofToken: token))
                    w.field("resume", peerID != nil)
                }
            )
        else { return [] }  // it waits for its hook
        if let name = rewrite.name {
            joinName = name.trimmedOfWhiteSpace
            nameIsParam = false  // the app's word, as a `name` claim
        }
        if let role = rewrite.role { roleName = role }
        if let values = rewrite.attributes { attributes = values }
        let outcome = try registry.join(
            JoinRequest(
                roomID: grant.roomID,
                requestedRoomID: roomID,
                userID: grant.userID,
                roleName: roleName,
                name: joinName,
                nameIsParam: nameIsParam,
                avatar: grant.avatar,
                attributes: attributes,
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

    /// Section 30: what in a hook's `join` rewrite is not allowed (a failed hook), or nil.
    static func hookJoinProblem(_ rewrite: HookRewrite, template: RoleTemplate, maxNameBytes: Int) -> String? {
        if let role = rewrite.role, template.role(role) == nil {
            return "role: \"\(role.prefix(64))\" is not in the template"
        }
        if let name = rewrite.name {
            let trimmed = name.trimmedOfWhiteSpace
            if trimmed.isEmpty { return "name: empty after trimming white space" }
            if trimmed.utf8.count > maxNameBytes { return "name: over max_name_bytes" }
        }
        if let attributes = rewrite.attributes {
            do throws(RoomError) {
                try PeerAttributes.check(attributes, field: "attributes")
            } catch {
                return error.message
            }
        }
        return nil
    }

    /// Every claim of a verified token (its payload), for a `join` hook.
    static func claims(ofToken token: String) -> JSON {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return .object([]) }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let json = try? JSON.parse([UInt8](data)), case .object = json
        else { return .object([]) }
        return json
    }
}
