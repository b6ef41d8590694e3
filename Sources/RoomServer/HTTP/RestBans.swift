import RoomModel
import RoomWire

/// REST bans (1.2, PROTOCOL.md section 22): `POST /v2/active-rooms/{room_id}/ban`
/// `{user_id, duration_s?, reason?}`, `POST …/unban {user_id}`, `GET …/bans`.
/// The operator (the server PeerRef) may ban any user, even one not in the room.
extension RestAPI {
    func ban(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let user = try params.requiredUserID("user_id")
        let duration = try params.int("duration_s", in: RoomRegistry.banDurationRange)
        let reason = try params.string("reason") ?? ""
        if user.rawValue.isEmpty { throw .invalidParams("user_id: must not be empty") }
        fanOut.apply(try registry.ban(user, in: room, by: .server, durationSeconds: duration, reason: reason))
        logger.info(
            "user banned",
            metadata: ["room": "\(roomID)", "user": "\(user)", "duration_s": "\(duration ?? 0)", "by": "rest"]
        )
        return .json(200, [:])
    }

    func unban(_ roomID: RoomID, _ params: Params) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let user = try params.requiredUserID("user_id")
        try registry.unban(user, in: room, by: .server)
        logger.info("user unbanned", metadata: ["room": "\(roomID)", "user": "\(user)", "by": "rest"])
        return .json(200, [:])
    }

    /// `{bans:[{user_id, until|null, reason, banned_by: PeerRef}]}`, oldest first.
    func listBans(_ roomID: RoomID) throws(RoomError) -> HTTPResponse {
        let bans = registry.bans(in: try room(roomID))
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("bans")
                w.array { w in
                    for ban in bans {
                        w.object { w in
                            w.field("user_id", ban.userID)
                            w.optionalField("until", ban.until)
                            w.field("reason", ban.reason)
                            w.key("banned_by")
                            w.actorRef(ban.bannedBy)
                        }
                    }
                }
            }
        )
    }
}
