import RoomModel
import RoomProtocol
import RoomWire

/// Tracks (signalling state only) and their audio levels for active speakers
/// (PROTOCOL.md sections 4 and 11).
extension Dispatcher {
    static var trackMethods: [String: Method] {
        [
            "track-add": .joined(Dispatcher.trackAdd),
            "track-update": .joined(Dispatcher.trackUpdate),
            "track-remove": .joined(Dispatcher.trackRemove),
            "audio-level": .joined(Dispatcher.audioLevel),
        ]
    }

    func trackAdd(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let id = try params.id("track_id")
        let kind = try params.choice("type", TrackType.self, required: true)!
        let source = try params.choice("source", TrackSource.self) ?? .regular
        let mute = try params.bool("mute") ?? false
        let description = try params.string("description") ?? ""
        let (track, deliveries) = try registry.addTrack(
            peer,
            id: id,
            kind: kind,
            source: source,
            mute: mute,
            description: description
        )
        fanOut(deliveries)
        return Self.encode { w in
            w.key("track")
            w.track(track)
        }
    }

    func trackUpdate(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let id = try params.requiredString("track_id")
        let (track, deliveries) = try registry.updateTrack(
            call.peer,
            id: id,
            mute: try params.bool("mute"),
            description: try params.string("description")
        )
        fanOut(deliveries)
        return Self.encode { w in
            w.key("track")
            w.track(track)
        }
    }

    func trackRemove(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        fanOut(try registry.removeTrack(call.peer, id: try params.requiredString("track_id")))
        return Self.empty
    }

    func audioLevel(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        guard let items = params.value("levels") else { throw .invalidParams("levels: required") }
        guard let entries = items.arrayValue else {
            throw .invalidParams("levels: expected an array, got \(items.typeName)")
        }
        if entries.count > registry.settings.limits.maxTracksPerPeer {
            throw .invalidParams("levels: at most \(registry.settings.limits.maxTracksPerPeer) entries")
        }
        var levels: [(trackID: String, level: Int)] = []
        for (index, entry) in entries.enumerated() {
            guard case .object = entry else {
                throw .invalidParams("levels[\(index)]: expected an object, got \(entry.typeName)")
            }
            let item = Params(entry, path: "levels[\(index)]")
            let trackID = try item.requiredString("track_id")
            guard let level = try item.int("level", in: 0...100) else {
                throw .invalidParams("levels[\(index)].level: required")
            }
            levels.append((trackID, level))
        }
        try registry.reportAudioLevels(call.peer, levels)
        return Self.empty
    }
}
