import Logging
import RoomModel
import RoomProtocol
import RoomWire

/// Moderation that holds (1.2, PROTOCOL.md section 22): bans, chat bans,
/// the chat's state (paused, slow mode) and reports.
extension Dispatcher {
    static var chatModerationMethods: [String: Method] {
        [
            "peer-ban": .joined(Dispatcher.peerBan),
            "peer-unban": .joined(Dispatcher.peerUnban),
            "chat-ban": .joined(Dispatcher.chatBan),
            "chat-unban": .joined(Dispatcher.chatUnban),
            "chat-state": .joined(Dispatcher.chatState),
            "report": .joined(Dispatcher.report),
            "report-resolve": .joined(Dispatcher.reportResolve),
        ]
    }

    func peerBan(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let room = peer.room
        let user = try registry.bannedUser(
            userID: try params.userID("user_id"),
            peerID: try params.peerID("peer_id"),
            in: room
        )
        let duration = try params.int("duration_s", in: RoomRegistry.banDurationRange)
        let reason = try params.string("reason") ?? ""
        apply(try registry.ban(user, in: room, by: .peer(peer), durationSeconds: duration, reason: reason), &call)
        logger.info(
            "user banned",
            metadata: ["room": "\(room.id)", "peer": "\(peer.id)", "user": "\(user)", "duration_s": "\(duration ?? 0)"]
        )
        return Self.empty
    }

    func peerUnban(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let user = try params.requiredUserID("user_id")
        try registry.unban(user, in: peer.room, by: .peer(peer))
        logger.info("user unbanned", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "user": "\(user)"])
        return Self.empty
    }

    func chatBan(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let room = peer.room
        let user = try registry.bannedUser(
            userID: try params.userID("user_id"),
            peerID: try params.peerID("peer_id"),
            in: room
        )
        let duration = try params.int("duration_s", in: RoomRegistry.banDurationRange)
        let shadow = try params.bool("shadow") ?? false
        fanOut(try registry.chatBan(user, in: room, by: .peer(peer), durationSeconds: duration, shadow: shadow))
        logger.info(
            "user chat-banned",
            metadata: [
                "room": "\(room.id)", "peer": "\(peer.id)", "user": "\(user)", "duration_s": "\(duration ?? 0)",
                "shadow": "\(shadow)",
            ]
        )
        return Self.empty
    }

    func chatUnban(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let user = try params.requiredUserID("user_id")
        fanOut(try registry.chatUnban(user, in: peer.room, by: .peer(peer)))
        logger.info(
            "user chat-unbanned",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "user": "\(user)"]
        )
        return Self.empty
    }

    func chatState(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let room = peer.room
        let paused = try params.bool("paused")
        let slow = try params.int("slow_mode_s", in: ChatControls.slowModeRange)
        fanOut(try registry.setChatState(in: room, by: .peer(peer), paused: paused, slowModeSeconds: slow))
        logger.info(
            "chat state set",
            metadata: [
                "room": "\(room.id)", "peer": "\(peer.id)", "paused": "\(room.chatControls.paused)",
                "slow_mode_s": "\(room.chatControls.slowModeSeconds)",
            ]
        )
        return Self.encode { w in
            w.field("paused", room.chatControls.paused)
            w.field("slow_mode_s", room.chatControls.slowModeSeconds)
        }
    }

    func report(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        try peer.requireUnrestricted("report")
        let given: [(ReportTarget.Kind, String)] = [
            (.message, try params.string("message_id")),
            (.question, try params.string("question_id")),
            (.peer, try params.string("peer_id")),
        ].compactMap { kind, id in id.map { (kind, $0) } }
        guard given.count == 1, let (kind, id) = given.first else {
            throw .invalidParams("message_id, question_id or peer_id: give exactly one, got \(given.count)")
        }
        let reason = try params.requiredString("reason")
        let (reportID, deliveries) = try registry.report(ReportTarget(kind, id), reason: reason, by: peer)
        fanOut(deliveries)
        logger.info(
            "report",
            metadata: [
                "room": "\(peer.room.id)", "peer": "\(peer.id)", "target": "\(kind.rawValue)", "report": "\(reportID)",
            ]
        )
        return Self.encode { w in w.field("report_id", reportID) }
    }

    /// `report-resolve {report_id, note?}` (1.3, section 32) → `{report}`.
    func reportResolve(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let id = try params.requiredString("report_id")
        let (report, deliveries) = try registry.resolveReport(
            id,
            note: try params.string("note"),
            by: .peer(peer),
            in: peer.room
        )
        fanOut(deliveries)
        logger.info(
            "report resolved",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "report": "\(id.prefix(64))"]
        )
        return Self.encode { w in
            w.key("report")
            w.report(report)
        }
    }
}

extension JSONWriter {
    /// `{paused, slow_mode_s, chat_banned, until}`: a receiver's whole chat state.
    mutating func chatState(_ state: ChatState) {
        state.encode(into: &self)
    }

    /// The fields of `chatState`, for `on-chat-state`'s params.
    mutating func chatStateFields(_ state: ChatState) {
        state.encodeFields(into: &self)
    }

    /// The fields of `on-report` (and of `report.created`'s `data`):
    /// `report_id, target {type, id}, reason, reported_by: PeerRef, at`.
    mutating func reportFields(_ report: Report) {
        field("report_id", report.id)
        key("target")
        object { w in
            w.field("type", report.target.type.rawValue)
            w.field("id", report.target.id)
        }
        field("reason", report.reason)
        key("reported_by")
        actorRef(report.reportedBy)
        field("at", report.at)
    }

    /// A Report (1.3, section 32): `{report_id, target, reason, reported_by,
    /// at, status, resolved_by: PeerRef|null, resolved_at|null, note|null}`.
    mutating func report(_ report: Report) {
        object { w in
            w.reportFields(report)
            w.field("status", report.status.rawValue)
            w.key("resolved_by")
            if let by = report.resolvedBy { w.actorRef(by) } else { w.null() }
            w.optionalField("resolved_at", report.resolvedAt)
            w.optionalField("note", report.note)
        }
    }
}
