import RoomConfig
import RoomProtocol

@testable import RoomModel

/// The guest call-in template, built in code so model tests don't read files.
enum Fixtures {
    static func template(settings: Settings = Settings(), guestLimit: Int = 0, banned: Bool = false) -> RoleTemplate {
        let stage = SubscribeParams(subscribeToRoles: ["host", "guest"])
        var roles = [
            Role(
                name: "host",
                priority: 1,
                publishParams: PublishParams(allowed: [.audio, .video, .screen]),
                subscribeParams: stage,
                permissions: Permissions(
                    endRoom: true,
                    removeOthers: true,
                    mute: true,
                    unmute: true,
                    changeRole: true,
                    hlsStreaming: true,
                    rtmpStreaming: true,
                    browserRecording: true
                )
            ),
            Role(
                name: "guest",
                priority: 2,
                maxPeerCount: guestLimit,
                publishParams: PublishParams(allowed: [.audio, .video]),
                subscribeParams: stage
            ),
            Role(name: "viewer", priority: 4, subscribeParams: stage),
            Role(
                name: "moderator",
                priority: 3,
                subscribeParams: SubscribeParams(subscribeToRoles: ["host", "guest", "moderator"]),
                permissions: Permissions(removeOthers: true, mute: true, unmute: true, changeRole: true)
            ),
        ]
        if banned { roles.append(Role(name: "banned", priority: 5, maxPeerCount: -1)) }
        return RoleTemplate(name: "test", roles: roles, settings: settings)
    }

    static func registry(
        settings: Settings = Settings(),
        guestLimit: Int = 0,
        banned: Bool = false
    )
        -> (RoomRegistry, ManualClock)
    {
        let clock = ManualClock()
        let registry = RoomRegistry(
            template: template(settings: settings, guestLimit: guestLimit, banned: banned),
            clock: clock,
            ids: SequentialIDGenerator()
        )
        return (registry, clock)
    }

    static func request(
        _ user: String,
        role: String,
        room: RoomID = "r1",
        name: String? = nil,
        viewOnly: Bool = false
    ) -> JoinRequest {
        JoinRequest(roomID: room, userID: UserID(user), roleName: role, name: name ?? user, viewOnly: viewOnly)
    }
}

extension Delivery {
    /// Recipient peer ids, for assertions.
    var to: [PeerID] { recipients.map(\.id) }
}

/// A flattened view of deliveries for assertions: (push name, recipient ids).
struct Sent: Equatable, CustomStringConvertible {
    var push: String
    var to: [PeerID]
    var description: String { "\(push)→\(to)" }
}

extension Push {
    var name: String {
        switch self {
        case .peerJoin: "on-peer-join"
        case .peerLeave: "on-peer-leave"
        case .peerUpdate: "on-peer-update"
        case .broadcast: "on-broadcast"
        case .broadcastShadowed: "on-broadcast:shadowed"
        case .messageHeld: "on-message-held"
        case .messageReview(_, let approved, _): "on-message-review:\(approved ? "approved" : "rejected")"
        case .trackAdd(_, let track): "on-track-add:\(track.trackID)"
        case .trackUpdate(_, let track): "on-track-update:\(track.trackID)"
        case .trackRemove(_, let track): "on-track-remove:\(track.trackID)"
        case .policyChange(let role): "on-policy-change:\(role)"
        case .roleChangeRequest(_, let role, _): "on-role-change-request:\(role)"
        case .roleChangeRejected(_, _, _, let reason): "on-role-change-rejected:\(reason.rawValue)"
        case .trackUpdateRequest(_, let track, let mute): "on-track-update-request:\(track):\(mute)"
        case .changeTrackMuteStateRequest(_, _, let value): "on-change-track-mute-state-request:\(value)"
        case .peerLeaveRequest(_, _, let roomEnd): "on-peer-leave-request:\(roomEnd)"
        case .roomState(let count, let joined?, let left?): "room-state:\(count):+\(joined.count):-\(left.count)"
        case .roomState(let count, _, _): "room-state:\(count)"
        case .activeSpeakers(let list):
            "active-speakers:" + list.map { "\($0.trackID)@\($0.level)" }.joined(separator: ",")
        case .metadataChange(let entry): "on-metadata-change:\(entry.key)@\(entry.version)"
        case .pollStart(let poll, let withAnswers): "on-poll-start:\(poll.id)\(withAnswers ? "+answers" : "")"
        case .pollStop(let poll): "on-poll-stop:\(poll.id)"
        case .pollStats(let poll, _, let withCorrect): "on-poll-stats:\(poll.id)\(withCorrect ? "+correct" : "")"
        case .pollAnswer(let pollID, _): "on-poll-answer:\(pollID)"
        case .questions(let changed, let removed): "on-questions:\(changed.map(\.id))-\(removed)"
        case .hlsUpdate(let state): "on-hls-update:\(state.running)"
        case .hlsTimedMetadata(let cues): "on-hls-timed-metadata:\(cues.count)"
        case .rtmpUpdate(let state): "on-rtmp-update:\(state.running)"
        case .recordingUpdate(let state): "on-record-update:\(state.running)"
        case .tokenExpiring(let at): "on-token-expiring:\(at)"
        case .chatState(let state): "on-chat-state:\(state.chatBanned ? "banned" : "free")"
        case .report(let report): "on-report:\(report.target.type.rawValue):\(report.target.id)"
        case .reportUpdate(let report): "on-report-update:\(report.id):\(report.status.rawValue)"
        case .messageDelete(let id, _): "on-message-delete:\(id)"
        case .chatClear: "on-chat-clear"
        case .messagePin(let message, _): "on-message-pin:\(message?.id ?? "null")"
        case .stageStatus(let request): "on-stage-status:\(request.id):\(request.status.rawValue)"
        case .stageQueue(let changed, let removed, let waiting):
            "on-stage-queue:\(changed.map(\.id))-\(removed)=\(waiting)"
        case .reactions(let counts):
            "on-reactions:" + counts.map { "\($0.target)/\($0.type)=\($0.total)" }.joined(separator: ",")
        }
    }
}

extension Array where Element == Delivery {
    var sent: [Sent] { map { Sent(push: $0.push.name, to: $0.to) } }
    /// Every push name a peer got, in order.
    func names(for peer: Peer) -> [String] { filter { $0.recipients.contains { $0 === peer } }.map(\.push.name) }
}

/// The protocol code `body` fails with, nil if it succeeds.
func code(_ body: () throws -> Void) -> ErrorCode? {
    do {
        try body()
        return nil
    } catch let error as RoomError {
        return error.code
    } catch {
        return .internalError
    }
}
