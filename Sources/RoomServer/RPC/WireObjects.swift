import RoomConfig
import RoomModel
import RoomProtocol
import RoomWire

/// Wire shapes of PROTOCOL.md section 3, written straight from model objects.
extension JSONWriter {
    /// The Peer object (RoomProtocol's `WirePeer` spells its keys).
    mutating func peer(_ peer: Peer, withTracks: Bool) {
        WirePeer.encode(
            into: &self,
            peerID: peer.id.rawValue,
            role: peer.role.name,
            joinedAt: peer.joinedAt,
            groups: peer.groups,
            tracks: withTracks ? peer.tracks : [],
            name: peer.name,
            data: peer.data,
            userID: peer.userID.rawValue,
            avatar: peer.avatar,
            attributes: peer.attributes
        )
    }

    mutating func track(_ track: Track) {
        track.encode(into: &self)
    }

    /// Who asked: a peer, or the REST API's `{"peer_id":null,"role":null,"info":{"name":"server"}}`.
    mutating func peerRef(_ initiator: Initiator) {
        switch initiator {
        case .peer(let peer): peerRef(peer)
        case .server: PeerRef.server.encode(into: &self)
        }
    }

    /// Who did something (RoomProtocol's `PeerRef` spells its keys).
    mutating func peerRef(_ peer: Peer) {
        PeerRef.encode(
            into: &self,
            peerID: peer.id.rawValue,
            role: peer.role.name,
            name: peer.name,
            userID: peer.userID.rawValue
        )
    }

    /// The Room object; `join`, `preview` and REST carry `hls` (HLSState or
    /// null), `rtmp` and `recording` (null before their first start); the REST
    /// room list leaves them out (`withHLS: false`).
    mutating func room(_ room: Room, locked: Bool, withHLS: Bool = true) {
        object { w in
            w.field("room_id", room.id)
            w.field("session_id", room.sessionID)
            w.field("started_at", room.startedAt)
            w.field("peer_count", room.peerCount)
            w.field("locked", locked)
            if withHLS {
                w.key("hls")
                w.liveStream(room.liveStream)  // HLSEncoding.swift
                w.key("rtmp")
                w.rtmp(room.rtmp)
                w.key("recording")
                w.recording(room.recording)
            }
        }
    }

    /// A template role with its name added (the `known_roles` entries).
    mutating func role(_ role: Role) {
        object { w in
            w.field("name", role.name)
            w.field("priority", role.priority)
            w.field("maxPeerCount", role.maxPeerCount)
            w.key("publishParams")
            w.object { w in
                w.key("allowed")
                w.strings(role.publishParams.allowed.map(\.rawValue))
                w.key("audio")
                w.object { w in
                    w.field("bitRate", role.publishParams.audio.bitRate)
                    w.field("codec", role.publishParams.audio.codec)
                }
                w.key("video")
                w.video(role.publishParams.video)
                w.key("screen")
                w.video(role.publishParams.screen)
            }
            w.key("subscribeParams")
            w.object { w in
                w.key("subscribeToRoles")
                w.strings(role.subscribeParams.subscribeToRoles)
                w.field("maxSubsBitRate", role.subscribeParams.maxSubsBitRate)
            }
            w.key("permissions")
            w.object { w in
                for name in Permissions.names { w.field(name, role.permissions[name] ?? false) }
            }
        }
    }

    private mutating func video(_ video: VideoParams) {
        object { w in
            w.field("bitRate", video.bitRate)
            w.field("codec", video.codec)
            w.field("frameRate", video.frameRate)
            w.field("width", video.width)
            w.field("height", video.height)
        }
    }

    /// A kept message (section 19): `{message_id, timestamp, sender, info}`, or null.
    /// A Message; `showShadow`: a shadowed one says so (`"shadowed": true`,
    /// for `moderateChat` readers only, section 31).
    mutating func chatMessage(_ chat: ChatMessage?, showShadow: Bool = false) {
        guard let chat else { return null() }
        object { w in
            w.field("message_id", chat.id)
            w.field("timestamp", chat.timestamp)
            w.key("sender")
            w.actorRef(chat.sender)
            w.chatInfo(chat)
            if showShadow, chat.shadowed { w.field("shadowed", true) }
        }
    }

    private mutating func chatInfo(_ chat: ChatMessage) {
        key("info")
        object { w in
            w.field("message", chat.message)
            w.field("type", chat.type)
        }
    }

    /// The members of an `on-broadcast` (written inside an open object).
    mutating func chatFields(_ chat: ChatMessage) {
        field("message_id", chat.id)
        field("timestamp", chat.timestamp)
        key("sender")
        actorRef(chat.sender)
        key("recipient")
        object { w in
            switch chat.recipient {
            case .broadcast:
                w.field("type", "broadcast")
            case .peer(let id):
                w.field("type", "peer")
                w.field("peer_id", id)
            case .roles(let roles):
                w.field("type", "roles")
                w.key("roles")
                w.strings(roles)
            }
        }
        chatInfo(chat)
    }

    /// Entry `{key, value, version, updated_by, updated_at}`.
    mutating func sessionEntry(_ entry: SessionEntry) {
        object { w in
            w.field("key", entry.key)
            w.key("value")
            w.raw(entry.value)
            w.field("version", entry.version)
            w.key("updated_by")
            if let actor = entry.updatedBy { w.actorRef(actor) } else { w.null() }
            w.key("updated_at")
            if let at = entry.updatedAt { w.int(at) } else { w.null() }
        }
    }
}

// Reactions (1.2, section 20).
extension JSONWriter {
    /// `target, type, total` and, when known, `mine`.
    mutating func reactionCountFields(_ count: ReactionCount) {
        count.encodeFields(into: &self)
    }

    /// `"counts": [{target, type, total, mine?}…]`.
    mutating func reactionCounts(_ counts: [ReactionCount]) {
        ReactionCount.encodeCounts(counts, into: &self)
    }
}
