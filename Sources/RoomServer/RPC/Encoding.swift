import RoomConfig
import RoomModel
import RoomWire

/// Wire shapes of PROTOCOL.md section 3, written straight from model objects.
extension JSONWriter {
    mutating func peer(_ peer: Peer, withTracks: Bool) {
        object { w in
            w.field("peer_id", peer.id)
            w.field("role", peer.role.name)
            w.field("joined_at", peer.joinedAt)
            w.key("groups")
            w.strings(peer.groups)
            w.key("tracks")
            w.object { w in
                if withTracks {
                    for track in peer.tracks {
                        w.key(track.id)
                        w.track(track)
                    }
                }
            }
            w.key("info")
            w.object { w in
                w.field("name", peer.name)
                w.field("data", peer.data)
                w.field("user_id", peer.userID)
                w.field("type", "regular")
            }
        }
    }

    mutating func track(_ track: Track) {
        object { w in
            w.field("track_id", track.id)
            w.field("type", track.kind.rawValue)
            w.field("source", track.source.rawValue)
            w.field("mute", track.mute)
            w.field("description", track.description)
        }
    }

    /// Who asked: a peer, or the REST API's `{"peer_id":null,"role":null,"info":{"name":"server"}}`.
    mutating func peerRef(_ initiator: Initiator) {
        switch initiator {
        case .peer(let peer): peerRef(peer)
        case .server:
            object { w in
                w.key("peer_id")
                w.null()
                w.key("role")
                w.null()
                w.key("info")
                w.object { w in w.field("name", "server") }
            }
        }
    }

    /// Who did something.
    mutating func peerRef(_ peer: Peer) {
        object { w in
            w.field("peer_id", peer.id)
            w.field("role", peer.role.name)
            w.key("info")
            w.object { w in
                w.field("name", peer.name)
                w.field("user_id", peer.userID)
            }
        }
    }

    /// The Room object; `join`, `preview` and REST carry `hls` (HLSState or
    /// null), the REST room list leaves it out (`withHLS: false`).
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

    /// The members of an `on-broadcast` (written inside an open object).
    mutating func chatFields(_ chat: ChatMessage) {
        field("message_id", chat.id)
        field("timestamp", chat.timestamp)
        key("sender")
        peerRef(chat.sender)
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
        key("info")
        object { w in
            w.field("message", chat.message)
            w.field("type", chat.type)
        }
    }
}

/// The JSON-RPC envelopes, encoded once into complete frames.
/// (`package`: `roombench micro` measures `push`.)
package enum Envelope {
    static func notification(_ method: String, _ params: (inout JSONWriter) -> Void) -> Frame {
        var w = Frame.writer()
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.field("method", method)
            w.key("params")
            w.object(params)
        }
        return Frame(payload: w)
    }

    /// A notification whose params object is already encoded.
    static func notification(_ method: String, params: [UInt8]) -> Frame {
        var w = Frame.writer(reserving: params.count + 64)
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.field("method", method)
            w.key("params")
            w.raw(params)
        }
        return Frame(payload: w)
    }

    /// One response object (not framed: batches put several in an array).
    static func response(id: JSON, into w: inout JSONWriter, result: [UInt8]) {
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.key("id")
            w.value(id)
            w.key("result")
            w.raw(result)
        }
    }

    static func response(id: JSON, into w: inout JSONWriter, error: RoomError) {
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.key("id")
            w.value(id)
            w.key("error")
            w.object { w in
                w.field("code", error.code.rawValue)
                w.field("message", error.message)
            }
        }
    }

    package static func push(_ push: Push) -> Frame {
        switch push {
        case .peerJoin(let peer, let withTracks):
            return notification("on-peer-join") { w in
                w.key("peer")
                w.peer(peer, withTracks: withTracks)
            }
        case .peerLeave(let peerID, let reason):
            return notification("on-peer-leave") { w in
                w.field("peer_id", peerID)
                w.field("reason", reason.rawValue)
            }
        case .peerUpdate(let peer, let changed, let withTracks):
            return notification("on-peer-update") { w in
                w.key("peer")
                w.peer(peer, withTracks: withTracks)
                w.key("changed")
                w.strings(changed.map(\.rawValue))
            }
        case .broadcast(let chat):
            return notification("on-broadcast") { w in w.chatFields(chat) }
        case .trackAdd(let peerID, let track):
            return trackPush("on-track-add", peerID, track)
        case .trackUpdate(let peerID, let track):
            return trackPush("on-track-update", peerID, track)
        case .trackRemove(let peerID, let track):
            return trackPush("on-track-remove", peerID, track)
        case .policyChange:
            preconditionFailure("policies are encoded from the dispatcher's cache")
        case .roleChangeRequest(let requestedBy, let role, let token):
            return notification("on-role-change-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("role", role)
                w.field("token", token)
            }
        case .roleChangeRejected(let token, let requestedFor, let role, let reason):
            return notification("on-role-change-rejected") { w in
                w.field("token", token)
                w.field("requested_for", requestedFor)
                w.field("role", role)
                w.field("reason", reason.rawValue)
            }
        case .trackUpdateRequest(let requestedBy, let trackID, let mute):
            return notification("on-track-update-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("track_id", trackID)
                w.field("mute", mute)
            }
        case .changeTrackMuteStateRequest(let requestedBy, let filter, let value):
            return notification("on-change-track-mute-state-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                if let roles = filter.roles {
                    w.key("roles")
                    w.strings(roles)
                }
                if let kind = filter.kind { w.field("type", kind.rawValue) }
                if let source = filter.source { w.field("source", source.rawValue) }
                w.field("value", value)
            }
        case .peerLeaveRequest(let requestedBy, let reason, let roomEnd):
            return notification("on-peer-leave-request") { w in
                w.key("requested_by")
                w.peerRef(requestedBy)
                w.field("reason", reason)
                w.field("room_end", roomEnd)
            }
        case .roomState(let peerCount, let joined, let left):
            return notification("room-state") { w in
                w.field("peer_count", peerCount)
                if let joined {
                    w.key("joined")
                    w.array { w in for peer in joined { w.peerRef(peer) } }
                }
                if let left {
                    w.key("left")
                    w.strings(left)
                }
            }
        case .activeSpeakers(let speakers):
            return notification("active-speakers") { w in
                w.key("speaker-list")
                w.array { w in
                    for speaker in speakers {
                        w.object { w in
                            w.field("peer_id", speaker.peerID)
                            w.field("track_id", speaker.trackID)
                            w.field("level", speaker.level)
                        }
                    }
                }
            }
        case .metadataChange, .pollStart, .pollStop, .pollStats:
            return audiencePush(push)
        case .hlsUpdate(let state):
            return notification("on-hls-update", params: Self.encodeLiveStream(state))
        case .hlsTimedMetadata(let cues):
            return notification("on-hls-timed-metadata") { w in w.cues(cues) }
        }
    }

    private static func trackPush(_ method: String, _ peerID: String, _ track: Track) -> Frame {
        notification(method) { w in
            w.field("peer_id", peerID)
            w.key("track")
            w.track(track)
        }
    }
}
