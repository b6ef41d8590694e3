import RoomProtocol
import RoomWire

/// A peer as a `RoomSnapshot` saves it (the `peers` section, in join order):
///
///     {"id", "user_id", "joined_at", "sequence", "role", "name", "data",
///      "avatar": string or null, "attributes": {key: value} (section 27;
///      absent in older saved states: null and {}),
///      "groups":[…], "view_only", "metadata_listening": "*" or [keys],
///      "tracks":[{"id", "kind", "source", "mute", "description"}]}
///
/// Takeover.swift restores the peers (each in a reconnect grace).
public struct PeerSnapshot: Sendable, Equatable {
    public var id: PeerID
    public var userID: UserID
    public var joinedAt: Int64
    public var sequence: Int
    public var role: String
    public var name: String
    public var data: String
    public var avatar: String? = nil
    public var attributes: [String: String] = [:]
    public var groups: [String]
    public var tracks: [Track]
    public var viewOnly: Bool
    public var metadataListening: MetadataListening
}

extension PeerSnapshot {
    init(_ peer: Peer) {
        self.init(
            id: peer.id,
            userID: peer.userID,
            joinedAt: peer.joinedAt,
            sequence: peer.sequence,
            role: peer.role.name,
            name: peer.name,
            data: peer.data,
            avatar: peer.avatar,
            attributes: peer.attributes,
            groups: peer.groups,
            tracks: peer.tracks,
            viewOnly: peer.viewOnly,
            metadataListening: peer.metadataListening
        )
    }

    init(_ r: SnapshotReader) throws(RoomSnapshotError) {
        try self.init(
            id: r.id("id"),
            userID: r.id("user_id"),
            joinedAt: r.int64("joined_at"),
            sequence: r.int("sequence"),
            role: r.string("role"),
            name: r.string("name"),
            data: r.string("data"),
            avatar: r.has("avatar") ? r.nullable("avatar", r.string) : nil,
            attributes: r.has("attributes") ? Self.attributes(r) : [:],
            groups: r.strings("groups"),
            tracks: r.objects("tracks") { t throws(RoomSnapshotError) in
                try Track(
                    trackID: t.string("id"),
                    type: t.oneOf("kind", TrackType.self),
                    source: t.oneOf("source", TrackSource.self),
                    mute: t.bool("mute"),
                    description: t.string("description")
                )
            },
            viewOnly: r.bool("view_only"),
            metadataListening: MetadataListening(r, "metadata_listening")
        )
    }

    /// The `attributes` object: string values.
    private static func attributes(_ r: SnapshotReader) throws(RoomSnapshotError) -> [String: String] {
        let value = try r.value("attributes")
        guard case .object(let members) = value else {
            throw r.failure("attributes", "expected object, got \(value.typeName)")
        }
        var attributes: [String: String] = [:]
        for member in members {
            guard case .string(let text) = member.value else {
                throw r.failure(
                    "attributes",
                    "expected string values, got \(member.value.typeName) at \"\(member.key)\""
                )
            }
            attributes[member.key] = text
        }
        return attributes
    }

    /// What restoring relies on: peers in join order with unique ids, none
    /// numbered at or above `nextSequence`.
    static func check(_ peers: [PeerSnapshot], nextSequence: Int) throws(RoomSnapshotError) {
        var peerIDs: Set<PeerID> = []
        var previous = 0
        for (i, peer) in peers.enumerated() {
            if !peerIDs.insert(peer.id).inserted {
                throw RoomSnapshotError(path: "peers[\(i)].id", problem: "duplicate peer id \"\(peer.id)\"")
            }
            if peer.sequence <= previous || peer.sequence > nextSequence {
                throw RoomSnapshotError(
                    path: "peers[\(i)].sequence",
                    problem:
                        "expected above the previous peer's (\(previous)) and at most next_sequence (\(nextSequence)), got \(peer.sequence)"
                )
            }
            previous = peer.sequence
        }
    }
}

extension MetadataListening {
    /// `"*"` or an array of keys.
    fileprivate init(_ r: SnapshotReader, _ key: String) throws(RoomSnapshotError) {
        if case .string(let s) = try r.value(key) {
            guard s == "*" else { throw r.failure(key, "expected \"*\" or an array of keys, got \"\(s)\"") }
            self = .all
        } else {
            self = .keys(Set(try r.strings(key)))
        }
    }
}

extension JSONWriter {
    /// The `peers` section.
    mutating func peersSection(_ peers: [PeerSnapshot]) {
        beginArray()
        for peer in peers { peerSnapshot(peer) }
        endArray()
    }

    private mutating func peerSnapshot(_ peer: PeerSnapshot) {
        beginObject()
        field("id", peer.id)
        field("user_id", peer.userID)
        field("joined_at", peer.joinedAt)
        field("sequence", peer.sequence)
        field("role", peer.role)
        field("name", peer.name)
        field("data", peer.data)
        key("avatar")
        if let avatar = peer.avatar { string(avatar) } else { null() }
        key("attributes")
        beginObject()
        for name in peer.attributes.keys.sorted() { field(name, peer.attributes[name]!) }
        endObject()
        key("groups")
        strings(peer.groups)
        key("tracks")
        beginArray()
        for track in peer.tracks {
            beginObject()
            field("id", track.trackID)
            field("kind", track.type.rawValue)
            field("source", track.source.rawValue)
            field("mute", track.mute)
            field("description", track.description)
            endObject()
        }
        endArray()
        field("view_only", peer.viewOnly)
        key("metadata_listening")
        switch peer.metadataListening {
        case .all: string("*")
        case .keys(let keys): strings(keys.sorted())
        }
        endObject()
    }
}
