import RoomModel
import RoomTokens
import RoomWire

/// Handlers for tracks, role changes, moderation, groups and active speakers
/// (PROTOCOL.md sections 4, 6 and 7).
extension Dispatcher {
    static var roomMethods: [String: Method] {
        [
            "track-add": Method(needsJoin: true, handler: Dispatcher.trackAdd),
            "track-update": Method(needsJoin: true, handler: Dispatcher.trackUpdate),
            "track-remove": Method(needsJoin: true, handler: Dispatcher.trackRemove),
            "role-change-request": Method(needsJoin: true, handler: Dispatcher.roleChangeRequest),
            "role-change": Method(needsJoin: true, handler: Dispatcher.roleChange),
            "role-change-reject": Method(needsJoin: true, handler: Dispatcher.roleChangeReject),
            "track-update-request": Method(needsJoin: true, handler: Dispatcher.trackUpdateRequest),
            "change-track-mute-state-request": Method(needsJoin: true, handler: Dispatcher.changeTrackMuteState),
            "peer-leave-request": Method(needsJoin: true, handler: Dispatcher.peerLeaveRequest),
            "end-room": Method(needsJoin: true, handler: Dispatcher.endRoom),
            "group-join": Method(needsJoin: true, handler: Dispatcher.groupJoin),
            "group-leave": Method(needsJoin: true, handler: Dispatcher.groupLeave),
            "group-add": Method(needsJoin: true, handler: Dispatcher.groupAdd),
            "group-remove": Method(needsJoin: true, handler: Dispatcher.groupRemove),
            "audio-level": Method(needsJoin: true, handler: Dispatcher.audioLevel),
        ]
    }

    static let empty: [UInt8] = Array("{}".utf8)

    // MARK: tracks

    func trackAdd(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let id = try params.id("track_id")
        let kind = try params.choice("type", Track.Kind.self, required: true)!
        let source = try params.choice("source", Track.Source.self) ?? .regular
        let mute = try params.bool("mute") ?? false
        let description = try params.string("description") ?? ""
        let (track, deliveries) = try registry.addTrack(peer, id: id, kind: kind, source: source, mute: mute,
                                                        description: description)
        fanOut(deliveries)
        return Self.encode { w in
            w.key("track")
            w.track(track)
        }
    }

    func trackUpdate(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("track_id")
        let (track, deliveries) = try registry.updateTrack(connection.peer!, id: id, mute: try params.bool("mute"),
                                                           description: try params.string("description"))
        fanOut(deliveries)
        return Self.encode { w in
            w.key("track")
            w.track(track)
        }
    }

    func trackRemove(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        fanOut(try registry.removeTrack(connection.peer!, id: try params.requiredString("track_id")))
        return Self.empty
    }

    // MARK: role changes

    func roleChangeRequest(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let role = try params.requiredString("role")
        let force = try params.bool("force")
        if let roles = try params.stringArray("roles") {
            if params.has("requested_for") { throw .invalidParams("requested_for and roles: give one, not both") }
            if roles.isEmpty { throw .invalidParams("roles: must not be empty") }
            if force == false { throw .invalidParams("force: a bulk role change (roles) is always forced") }
            let (changed, effects) = try registry.bulkRoleChange(by: .peer(peer), in: peer.room, roles: roles, to: role)
            apply(effects)
            return Self.encode { w in
                w.key("changed")
                w.strings(changed.map(\.id))
            }
        }
        let target = try params.requiredString("requested_for")
        let (outcome, effects) = try registry.requestRoleChange(by: .peer(peer), in: peer.room, targetID: target,
                                                                 role: role, force: force ?? false)
        apply(effects)
        guard case .requested(let token) = outcome else { return Self.empty }
        schedule.rearm(.roleChangeRequest)
        return Self.encode { w in w.field("token", token) }
    }

    func roleChange(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        apply(try registry.acceptRoleChange(peer, token: try params.requiredString("token")))
        return Self.encode { w in
            w.key("peer")
            w.peer(peer, withTracks: true)
        }
    }

    func roleChangeReject(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        apply(try registry.rejectRoleChange(connection.peer!, token: try params.requiredString("token")))
        return Self.empty
    }

    // MARK: moderation

    func trackUpdateRequest(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let target = try params.requiredString("requested_for")
        let track = try params.requiredString("track_id")
        guard let mute = try params.bool("mute") else { throw .invalidParams("mute: required") }
        apply(try registry.requestTrackUpdate(by: .peer(peer), in: peer.room, targetID: target, trackID: track, mute: mute))
        return Self.empty
    }

    func changeTrackMuteState(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        guard let value = try params.bool("value") else { throw .invalidParams("value: required") }
        let filter = TrackFilter(roles: try params.stringArray("roles"),
                                 kind: try params.choice("type", Track.Kind.self),
                                 source: try params.choice("source", Track.Source.self))
        let (affected, effects) = try registry.changeTrackMuteState(by: .peer(peer), in: peer.room, value: value,
                                                                     filter: filter)
        apply(effects)
        return Self.encode { w in w.field("tracks_affected", affected) }
    }

    func peerLeaveRequest(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let target = try params.requiredString("requested_for")
        let reason = try params.string("reason") ?? ""
        apply(try registry.removePeer(by: .peer(peer), in: peer.room, targetID: target, reason: reason))
        return Self.empty
    }

    func endRoom(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let peer = connection.peer!
        let reason = try params.string("reason") ?? ""
        let lock = try params.bool("lock") ?? false
        let room = peer.room
        apply(try registry.endRoom(by: .peer(peer), room, reason: reason, lock: lock))
        logger.info("room ended", metadata: ["room": "\(room.id)", "peer": "\(peer.id)", "lock": "\(lock)"])
        return Self.empty
    }

    // MARK: groups

    func groupJoin(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        try changeGroup(params, connection, add: true, ofOther: false)
    }

    func groupLeave(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        try changeGroup(params, connection, add: false, ofOther: false)
    }

    func groupAdd(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        try changeGroup(params, connection, add: true, ofOther: true)
    }

    func groupRemove(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        try changeGroup(params, connection, add: false, ofOther: true)
    }

    /// `group-join`/`group-leave` (the caller) and `group-add`/`group-remove` (`peer_id`).
    private func changeGroup(_ params: Params, _ connection: Connection, add: Bool, ofOther: Bool)
        throws(RoomError) -> [UInt8]
    {
        let peer = connection.peer!
        let name = try params.id("name", required: true)!
        let target = ofOther ? try registry.groupTarget(by: peer, try params.requiredString("peer_id")) : peer
        fanOut(add ? try registry.addToGroup(by: .peer(peer), target, group: name)
                   : try registry.removeFromGroup(by: .peer(peer), target, group: name))
        return groups(of: target)
    }

    private func groups(of peer: Peer) -> [UInt8] {
        Self.encode { w in
            w.key("groups")
            w.strings(peer.groups)
        }
    }

    // MARK: active speakers

    func audioLevel(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        guard let items = params.value("levels") else { throw .invalidParams("levels: required") }
        guard let entries = items.arrayValue else { throw .invalidParams("levels: expected an array, got \(items.typeName)") }
        if entries.count > registry.settings.limits.maxTracksPerPeer {
            throw .invalidParams("levels: at most \(registry.settings.limits.maxTracksPerPeer) entries")
        }
        var levels: [(trackID: String, level: Int)] = []
        for (index, entry) in entries.enumerated() {
            guard case .object = entry else { throw .invalidParams("levels[\(index)]: expected an object, got \(entry.typeName)") }
            let item = Params(entry, path: "levels[\(index)]")
            let trackID = try item.requiredString("track_id")
            guard let level = try item.int("level", in: 0...100) else { throw .invalidParams("levels[\(index)].level: required") }
            levels.append((trackID, level))
        }
        try registry.reportAudioLevels(connection.peer!, levels)
        return Self.empty
    }
}

/// The shape of every id: `[A-Za-z0-9_-]{1,64}` (room ids, track ids, groups).
func isValidID(_ id: String) -> Bool { TokenMinter.isValidRoomID(id) }

extension Params {
    /// A client-chosen id (`[A-Za-z0-9_-]{1,64}`).
    func id(_ key: String, required: Bool = false) throws(RoomError) -> String? {
        guard let value = required ? try requiredString(key) : try string(key) else { return nil }
        guard isValidID(value) else { throw .invalidParams("\(key): must match [A-Za-z0-9_-]{1,64}") }
        return value
    }

    /// One of an enum's raw values.
    func choice<T: RawRepresentable & CaseIterable>(_ key: String, _: T.Type, required: Bool = false) throws(RoomError)
        -> T? where T.RawValue == String
    {
        guard let value = required ? try requiredString(key) : try string(key) else { return nil }
        guard let choice = T(rawValue: value) else {
            throw .invalidParams("\(key): expected one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), got \"\(value)\"")
        }
        return choice
    }
}

/// `find-peer` / `peer-iter-next` (PROTOCOL.md section 12).
extension Dispatcher {
    static var searchMethods: [String: Method] {
        [
            "find-peer": Method(needsJoin: true, handler: Dispatcher.findPeer),
            "peer-iter-next": Method(needsJoin: true, handler: Dispatcher.peerIterNext),
        ]
    }

    func findPeer(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let limit = try params.int("limit", in: 1...RoomRegistry.maxPageSize) ?? 10
        let page = try registry.findPeers(connection.peer!, role: try params.string("role"),
                                          group: try params.string("group"), limit: limit)
        return encode(page)
    }

    func peerIterNext(_ params: Params, _ connection: Connection) throws(RoomError) -> [UInt8] {
        let iterator = try params.requiredString("iterator")
        let limit = try params.int("limit", in: 1...RoomRegistry.maxPageSize) ?? 10
        return encode(try registry.nextPeers(connection.peer!, iterator: iterator, limit: limit))
    }

    private func encode(_ page: PeerPage) -> [UInt8] {
        Self.encode { w in
            w.key("iterator")
            if let iterator = page.iterator { w.string(iterator) } else { w.null() }
            w.field("total", page.total)
            w.field("eof", page.eof)
            w.key("peers")
            w.array { w in for entry in page.peers { w.peer(entry.peer, withTracks: entry.withTracks) } }
        }
    }
}
