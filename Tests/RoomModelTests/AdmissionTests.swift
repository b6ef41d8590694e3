import RoomConfig
import Testing

@testable import RoomModel

/// `join` and `preview` share one admission (Admission.swift): the same
/// checks in the same order, with the same codes and messages; only a join
/// checks the sizes of `name` and `data`, and a resume needs no room.
@Suite struct AdmissionTests {
    /// The error `body` throws, nil if it succeeds.
    func error(_ body: () throws -> Void) -> RoomError? {
        do {
            try body()
            return nil
        } catch let error as RoomError {
            return error
        } catch {
            return RoomError(.internalError, "\(error)")
        }
    }

    @Test func previewAndJoinRefuseAlikeInTheSameOrder() throws {
        var settings = Settings()
        settings.room.maxPeers = 3
        settings.room.autoCreate = false
        settings.room.predefined = ["r1", "r2", "full"]
        settings.limits.maxNameBytes = 8
        let (registry, _) = Fixtures.registry(settings: settings, guestLimit: 1, banned: true)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        _ = try registry.join(Fixtures.request("g", role: "guest"))
        _ = try registry.join(Fixtures.request("a", role: "host", room: "full"))
        _ = try registry.join(Fixtures.request("b", role: "host", room: "full"))
        _ = try registry.join(Fixtures.request("c", role: "host", room: "full"))
        let ender = try registry.join(Fixtures.request("e", role: "host", room: "r2")).peer
        _ = try registry.endRoom(by: .peer(ender), ender.room, reason: "done", lock: true)

        func request(_ role: String, room: RoomID = "r1", claim: RoomID? = nil, name: String = "x") -> JoinRequest {
            JoinRequest(roomID: room, requestedRoomID: claim, userID: "u", roleName: role, name: name)
        }
        let cases: [(JoinRequest, ErrorCode, String)] = [
            // Each request also fails every later check: the first one in the order wins.
            (
                request("king", room: "full", claim: "other"), .roomIDMismatch,
                #"room_id "other" differs from the token's room_id"#
            ),
            (request("king", room: "r2"), .roleClaimInvalid, #"role "king" is not in the template"#),
            (request("banned", room: "r2"), .roleClaimInvalid, #"role "banned" may not join (maxPeerCount -1)"#),
            (request("guest", room: "r2"), .roomLocked, #"room "r2" is locked"#),
            (request("guest", room: "nowhere"), .roomNotFound, #"room "nowhere" does not exist"#),
            (request("guest", room: "full"), .roomFull, #"room "full" is full (max_peers 3)"#),
            (request("guest"), .roleLimitReached, #"role "guest" is full (maxPeerCount 1)"#),
        ]
        for (joinRequest, code, message) in cases {
            let joined = error { _ = try registry.join(joinRequest) }
            let previewed = error { _ = try registry.preview(joinRequest) }
            #expect(joined == RoomError(code, message))
            #expect(previewed == joined)
        }

        // Sizes come after the role and before the room: a join checks them, a preview does not.
        let long = request("viewer", room: "r2", name: "123456789")
        #expect(error { _ = try registry.join(long) } == RoomError(.tooLarge, "name: 9 bytes is over the limit of 8"))
        #expect(error { _ = try registry.preview(long) } == RoomError(.roomLocked, #"room "r2" is locked"#))
        #expect(error { _ = try registry.join(request("banned", name: "123456789")) }?.code == .roleClaimInvalid)
        #expect(try registry.preview(request("viewer", name: "123456789")).room === host.room)
        #expect(try registry.preview(request("viewer", room: "r1")).role.name == "viewer")
    }

    @Test func aResumeNeedsNoRoomForItsPeerButPassesTheOtherChecks() throws {
        var settings = Settings()
        settings.room.maxPeers = 2
        let (registry, _) = Fixtures.registry(settings: settings)
        _ = try registry.join(Fixtures.request("h", role: "host"))
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(registry.startGrace(viewer))
        var resume = Fixtures.request("v", role: "viewer")
        resume.resumePeerID = viewer.id
        #expect(code { _ = try registry.preview(resume) } == .roomFull, "a preview is no resume")
        #expect(try registry.join(resume).resumed, "the room is full, but the peer is in it")
        resume.requestedRoomID = "r9"
        #expect(code { _ = try registry.join(resume) } == .roomIDMismatch)
        resume.requestedRoomID = nil
        resume.roleName = "king"
        #expect(code { _ = try registry.join(resume) } == .roleClaimInvalid)
    }
}
