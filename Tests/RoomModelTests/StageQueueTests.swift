import RoomConfig
import RoomProtocol
import Testing

@testable import RoomModel

/// The call-in queue without sockets (PROTOCOL.md section 26): the state
/// machine, its links to role changes and leaves, the bounds, the blocks
/// and the coalesced `on-stage-queue`.
@Suite struct StageQueueTests {
    private func setUp(
        _ settings: Settings = Settings()
    ) throws -> (RoomRegistry, ManualClock, host: Peer, viewer: Peer) {
        let (registry, clock) = Fixtures.registry(settings: settings)
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        return (registry, clock, host, viewer)
    }

    /// waiting → invited → live → done, each status change told to the
    /// requester's user's peers, and the invitation a polite role change.
    @Test func aRequestGoesWaitingInvitedLiveThenDone() throws {
        let (registry, clock, host, viewer) = try setUp()
        let second = try registry.join(Fixtures.request("v", role: "viewer")).peer  // the same user, another peer
        let (request, made) = try registry.requestStage(by: viewer, note: "about the budget")
        #expect(request.status == .waiting && request.position == 1 && request.note == "about the budget")
        #expect(made.sent == [Sent(push: "on-stage-status:stage-1:waiting", to: [viewer.id, second.id])])

        clock.advance(byMillis: 5)
        let (invited, token, effects) = try registry.inviteToStage(
            by: .peer(host),
            in: host.room,
            requestID: request.id,
            role: nil
        )
        #expect(invited.status == .invited && invited.role == "guest" && invited.position == nil)
        #expect(invited.invitedBy?.peerID == host.id.rawValue && invited.updatedAt == request.updatedAt + 5)
        #expect(
            effects.deliveries.sent == [
                Sent(push: "on-role-change-request:guest", to: [viewer.id]),
                Sent(push: "on-stage-status:stage-1:invited", to: [viewer.id, second.id]),
            ]
        )
        let accepted = try registry.acceptRoleChange(viewer, token: token)
        #expect(viewer.role.name == "guest")
        #expect(accepted.deliveries.names(for: second).contains("on-stage-status:stage-1:live"))
        let live = try #require(host.room.stage.request(request.id))
        #expect(live.status == .live && live.peer.role == "guest")

        _ = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: viewer.id,
            role: "viewer",
            force: true
        )
        #expect(
            host.room.stage.request(request.id)?.status == .done,
            "a live request ends with its peer's next role change"
        )
        let (again, _) = try registry.requestStage(by: viewer, note: nil)
        #expect(again.id != request.id && again.status == .waiting, "a user may ask again after its request ended")
    }

    @Test func rejectingTheInvitationDeclinesAndItsExpiryPutsItBackAtItsPlace() throws {
        let (registry, clock, host, _) = try setUp()
        let viewers = try (0..<3).map { try registry.join(Fixtures.request("w\($0)", role: "viewer")).peer }
        var ids: [String] = []
        for viewer in viewers {
            ids.append(try registry.requestStage(by: viewer, note: nil).0.id)
            clock.advance(byMillis: 1)
        }
        let first = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: ids[0], role: nil)
        #expect(host.room.stage.position(of: ids[1]) == 1, "an invited request leaves the waiting order")
        clock.advance(byMillis: Int64(registry.settings.roleChange.requestTTLS) * 1000 - 1)
        #expect(registry.expireDueEffects().deliveries.isEmpty, "1 ms before the expiry nothing")
        clock.advance(byMillis: 1)
        let expired = registry.expireDueEffects().deliveries
        #expect(expired.names(for: viewers[0]) == ["on-stage-status:\(ids[0]):waiting"])
        let back = try #require(host.room.stage.request(ids[0]))
        #expect(back.position == 1 && back.role == nil && back.invitedBy == nil, "back at its old place")
        #expect(
            code { _ = try registry.acceptRoleChange(viewers[0], token: first.token) } == .roleChangeRequestNotFound
        )

        let second = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: ids[1], role: nil)
        let rejected = try registry.rejectRoleChange(viewers[1], token: second.token)
        #expect(rejected.deliveries.names(for: viewers[1]) == ["on-stage-status:\(ids[1]):declined"])
        #expect(host.room.stage.openRequest(of: viewers[1].userID) == nil)
        #expect(host.room.stage.position(of: ids[2]) == 2)
    }

    /// Withdrawing or declining an invited request takes its token with it.
    @Test func anEndedInvitationsTokenIsGone() throws {
        let (registry, _, host, viewer) = try setUp()
        let id = try registry.requestStage(by: viewer, note: nil).0.id
        let invited = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: id, role: nil)
        let deadlines = registry.deadlineCount
        let withdrawn = try registry.withdrawStage(by: viewer)
        #expect(withdrawn.sent == [Sent(push: "on-stage-status:\(id):withdrawn", to: [viewer.id])])
        #expect(registry.deadlineCount == deadlines - 1, "the invitation's expiry went with it")
        #expect(code { _ = try registry.acceptRoleChange(viewer, token: invited.token) } == .roleChangeRequestNotFound)
        #expect(code { _ = try registry.withdrawStage(by: viewer) } == .stageRequestNotFound)

        let next = try registry.requestStage(by: viewer, note: nil).0.id
        let again = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: next, role: nil)
        _ = try registry.declineStage(by: .peer(host), in: host.room, requestID: next, reason: "not now")
        #expect(code { _ = try registry.acceptRoleChange(viewer, token: again.token) } == .roleChangeRequestNotFound)
        do {
            _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: next, role: nil)
            Issue.record("a declined request was invited")
        } catch {
            #expect(error.code == .stageRequestNotFound && error.status == "declined")
        }
    }

    @Test func whoMayAskListAndInvite() throws {
        var settings = Settings()
        let (registry, _, host, viewer) = try setUp(settings)
        let guest = try registry.join(Fixtures.request("g", role: "guest")).peer
        let restricted = try registry.join(Fixtures.request("r", role: "viewer", viewOnly: true)).peer
        #expect(code { _ = try registry.requestStage(by: host, note: nil) } == .permissionDenied, "moderating")
        #expect(code { _ = try registry.requestStage(by: guest, note: nil) } == .permissionDenied, "guest_role")
        let asked = try registry.requestStage(by: restricted, note: nil).0
        #expect(asked.status == .waiting, "a view_and_polls_only peer may ask")
        #expect(code { _ = try registry.withdrawStage(by: restricted) } == nil, "and withdraw")
        for initiator in [Initiator.peer(viewer), .peer(restricted)] {
            let listing = code {
                _ = try registry.listStage(by: initiator, in: host.room, status: .waiting, offset: 0, limit: 50)
            }
            #expect(listing == .permissionDenied)
        }
        let id = try registry.requestStage(by: viewer, note: nil).0.id
        #expect(
            code { _ = try registry.inviteToStage(by: .peer(viewer), in: host.room, requestID: id, role: nil) }
                == .permissionDenied
        )
        #expect(
            code { _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: id, role: "viewer") }
                == .invalidParams,
            "the role the peer has"
        )
        #expect(
            code { _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: id, role: "nope") }
                == .roleNotFound
        )
        #expect(
            code { _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: "x", role: nil) }
                == .stageRequestNotFound
        )

        settings.stage.enabled = false
        let (off, _, offHost, offViewer) = try setUp(settings)
        #expect(code { _ = try off.requestStage(by: offViewer, note: nil) } == .permissionDenied)
        #expect(
            code { _ = try off.listStage(by: .peer(offHost), in: offHost.room, status: .waiting, offset: 0, limit: 5) }
                == .permissionDenied
        )
        #expect(off.stageJoinInfo(for: offHost) == nil)
    }

    @Test func aTemplateWithoutItsGuestRoleHasTheQueueOff() throws {
        var template = Fixtures.template()
        template.roles["guest"] = nil
        let registry = RoomRegistry(template: template, clock: ManualClock(), ids: SequentialIDGenerator())
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        #expect(!registry.stageIsOn && registry.stageJoinInfo(for: host) == nil)
        #expect(code { _ = try registry.requestStage(by: viewer, note: nil) } == .permissionDenied)
    }

    @Test func oneRequestPerUserItsNoteReplaced() throws {
        let (registry, clock, host, viewer) = try setUp()
        let other = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let first = try registry.requestStage(by: viewer, note: "one").0
        _ = registry.tickStage()
        clock.advance(byMillis: 7)
        let (second, told) = try registry.requestStage(by: other, note: "two")
        #expect(second.id == first.id && second.note == "two" && second.updatedAt == first.updatedAt + 7)
        #expect(second.peer.peerID == other.id.rawValue, "the latest caller's peer")
        #expect(told.isEmpty, "a new note is no status change")
        let tick = registry.tickStage()
        #expect(tick.sent == [Sent(push: "on-stage-queue:[\"\(first.id)\"]-[]=1", to: [host.id])])
        let (third, _) = try registry.requestStage(by: other, note: nil)
        #expect(third.note == "two" && third.updatedAt == second.updatedAt, "no note: nothing changes")
        #expect(registry.tickStage().isEmpty)
    }

    @Test func theBoundsAndTheirErrors() throws {
        var settings = Settings()
        settings.stage.maxWaiting = 2
        settings.stage.noteBytes = 4
        let (registry, _, host, viewer) = try setUp(settings)
        #expect(code { _ = try registry.requestStage(by: viewer, note: "12345") } == .tooLarge)
        let a = try registry.requestStage(by: viewer, note: "1234").0
        _ = try registry.requestStage(by: registry.join(Fixtures.request("b", role: "viewer")).peer, note: nil)
        let third = try registry.join(Fixtures.request("c", role: "viewer")).peer
        #expect(code { _ = try registry.requestStage(by: third, note: nil) } == .tooMany)
        _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: a.id, role: nil)
        #expect(code { _ = try registry.requestStage(by: third, note: nil) } == nil, "invited requests do not count")
    }

    @Test func theWordFilterRefusesANote() throws {
        var settings = Settings()
        settings.chat.blockedWords = ["spoiler"]
        let (registry, _, _, viewer) = try setUp(settings)
        #expect(code { _ = try registry.requestStage(by: viewer, note: "a SPOILER here") } == .chatClosed)
    }

    /// At most 1,000 ended requests are kept, oldest out first.
    @Test func endedRequestsAreKeptUpToTheirBound() throws {
        let (registry, _, host, viewer) = try setUp()
        var ids: [String] = []
        for _ in 0..<(StageQueue.maxEnded + 5) {
            ids.append(try registry.requestStage(by: viewer, note: nil).0.id)
            _ = try registry.withdrawStage(by: viewer)
        }
        let room = host.room
        #expect(room.stage.endedCount == StageQueue.maxEnded)
        #expect(room.stage.request(ids[4]) == nil && room.stage.request(ids[5])?.status == .withdrawn)
        let page = try registry.listStage(by: .peer(host), in: room, status: .withdrawn, offset: 0, limit: 3)
        #expect(page.total == StageQueue.maxEnded && page.requests.map(\.id) == ids.suffix(3).reversed())
    }

    @Test func aBlockDeclinesAndRefusesUntilItsEnd() throws {
        let (registry, clock, host, viewer) = try setUp()
        let id = try registry.requestStage(by: viewer, note: nil).0.id
        let told = try registry.blockFromStage(by: .peer(host), in: host.room, userID: viewer.userID, durationS: 60)
        #expect(told.sent == [Sent(push: "on-stage-status:\(id):declined", to: [viewer.id])])
        #expect(code { _ = try registry.requestStage(by: viewer, note: nil) } == .stageBlocked)
        clock.advance(byMillis: 59_999)
        _ = registry.expireDue()
        #expect(code { _ = try registry.requestStage(by: viewer, note: nil) } == .stageBlocked, "1 ms before its end")
        clock.advance(byMillis: 1)
        _ = registry.expireDue()
        #expect(host.room.stage.blocks.isEmpty, "its deadline ended it")
        #expect(code { _ = try registry.requestStage(by: viewer, note: nil) } == nil)

        _ = try registry.blockFromStage(by: .peer(host), in: host.room, userID: "u2", durationS: 30)
        let entries = registry.deadlineCount
        try registry.unblockFromStage(by: .peer(host), in: host.room, userID: "u2")
        #expect(registry.deadlineCount == entries - 1, "an unblock cancels its deadline")
        _ = try registry.blockFromStage(by: .peer(host), in: host.room, userID: "u3", durationS: nil)
        #expect(registry.deadlineCount == entries - 1, "an untimed block has none")
    }

    @Test func leavingWithdrawsAWaitingRequestAndEndsALiveOne() throws {
        let (registry, _, host, viewer) = try setUp()
        let caller = try registry.join(Fixtures.request("c", role: "viewer")).peer
        let callerTwin = try registry.join(Fixtures.request("c", role: "viewer")).peer
        let waiting = try registry.requestStage(by: caller, note: nil).0
        let left = registry.leave(caller, reason: .clientRequest)
        #expect(left.names(for: callerTwin).contains("on-stage-status:\(waiting.id):withdrawn"))
        #expect(host.room.stage.request(waiting.id)?.status == .withdrawn, "whatever other peers the user has")

        let live = try registry.requestStage(by: viewer, note: nil).0
        let invited = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: live.id, role: nil)
        _ = try registry.acceptRoleChange(viewer, token: invited.token)
        _ = registry.leave(viewer, reason: .clientRequest)
        #expect(host.room.stage.request(live.id)?.status == .done)
    }

    /// Any role change of the request's peer other than accepting its
    /// invitation ends a waiting or invited request as `done`.
    @Test func anotherRoleChangeEndsAnOpenRequest() throws {
        let (registry, _, host, viewer) = try setUp()
        let id = try registry.requestStage(by: viewer, note: nil).0.id
        _ = try registry.inviteToStage(by: .peer(host), in: host.room, requestID: id, role: nil)
        _ = try registry.requestRoleChange(
            by: .peer(host),
            in: host.room,
            targetID: viewer.id,
            role: "moderator",
            force: true
        )
        #expect(host.room.stage.request(id)?.status == .done)
    }

    /// `on-stage-queue`: each changed request once, as it is at the push, an
    /// ended one by id in `removed`, `waiting` the count then; moderating
    /// peers only.
    @Test func theCoalescedPushCarriesEachChangeOnce() throws {
        let (registry, clock, host, viewer) = try setUp()
        let moderator = try registry.join(Fixtures.request("m", role: "moderator")).peer
        _ = try registry.join(Fixtures.request("mv", role: "moderator", viewOnly: true)).peer
        let other = try registry.join(Fixtures.request("o", role: "viewer")).peer
        let a = try registry.requestStage(by: viewer, note: "a").0
        clock.advance(byMillis: 1)
        let b = try registry.requestStage(by: other, note: "b").0
        _ = try registry.requestStage(by: viewer, note: "a again")
        let first = registry.tickStage()
        #expect(first.count == 1 && first[0].to == [host.id, moderator.id])
        guard case .stageQueue(let changed, let removed, let waiting) = first[0].push else {
            Issue.record("not on-stage-queue")
            return
        }
        #expect(changed.map(\.id) == [a.id, b.id] && changed[0].note == "a again" && removed.isEmpty && waiting == 2)
        #expect(changed.map(\.position) == [1, 2])
        #expect(registry.tickStage().isEmpty, "nothing changed since")
        _ = try registry.withdrawStage(by: viewer)
        let second = registry.tickStage()
        #expect(second.sent == [Sent(push: "on-stage-queue:[]-[\"\(a.id)\"]=1", to: [host.id, moderator.id])])
    }

    /// 1,000 waiting requests with long notes: each push stays within its
    /// budget, oldest change first, and every change arrives.
    @Test func aPushCarriesAtMostItsBudget() throws {
        var settings = Settings()
        settings.stage.noteBytes = 4096
        let (registry, _, _, _) = try setUp(settings)
        let note = String(repeating: "\u{1}", count: 300)  // 1,800 bytes as JSON escapes
        var ids: [String] = []
        for n in 0..<1000 {
            let peer = try registry.join(Fixtures.request("w\(n)", role: "viewer")).peer
            ids.append(try registry.requestStage(by: peer, note: note).0.id)
        }
        var seen: [String] = []
        var pushes = 0
        while case let deliveries = registry.tickStage(), !deliveries.isEmpty {
            guard case .stageQueue(let changed, _, _) = deliveries[0].push else { break }
            #expect(changed.reduce(4) { $0 + $1.encodedSize + 1 } <= StageQueue.pushBudget)
            seen += changed.map(\.id)
            pushes += 1
        }
        #expect(seen == ids, "every change, oldest first")
        #expect(pushes > 100, "\(pushes) pushes of at most 16 KiB")
    }

    @Test func joinResultsCarryTheStage() throws {
        let (registry, _, host, viewer) = try setUp()
        let other = try registry.join(Fixtures.request("o", role: "viewer")).peer
        let request = try registry.requestStage(by: viewer, note: nil).0
        guard case .waiting(let count)? = registry.stageJoinInfo(for: host) else {
            Issue.record("a moderating peer gets stage:{waiting}")
            return
        }
        #expect(count == 1)
        guard case .request(let mine)? = registry.stageJoinInfo(for: viewer) else {
            Issue.record("the request's peer gets stage:{request}")
            return
        }
        #expect(mine.id == request.id && mine.position == 1)
        #expect(registry.stageJoinInfo(for: other) == nil)
    }
}

extension RoomRegistry.StageJoinInfo: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        switch (a, b) {
        case (.waiting(let x), .waiting(let y)): x == y
        case (.request(let x), .request(let y)): x == y
        default: false
        }
    }
}

/// The `stage` section of the saved room state (1.3: the queue and the
/// blocks survive a home's death).
@Suite struct StageSnapshotTests {
    @Test func theQueueAndItsBlocksRoundTripAndARestoredInvitationEndsOnTime() throws {
        let (registry, clock) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        #expect(
            !String(decoding: registry.snapshot(of: room).encodeJSON(), as: UTF8.self).contains("\"stage\""),
            "a session that never used the queue saves no stage section"
        )
        let viewers = try (0..<5).map { try registry.join(Fixtures.request("w\($0)", role: "viewer")).peer }
        var ids: [String] = []
        for viewer in viewers {
            ids.append(try registry.requestStage(by: viewer, note: "note of \(viewer.userID)").0.id)
            clock.advance(byMillis: 1)
        }
        let live = try registry.inviteToStage(by: .peer(host), in: room, requestID: ids[0], role: nil)
        _ = try registry.acceptRoleChange(viewers[0], token: live.token)
        _ = try registry.inviteToStage(by: .peer(host), in: room, requestID: ids[1], role: "moderator")
        _ = try registry.declineStage(by: .peer(host), in: room, requestID: ids[2], reason: nil)
        _ = try registry.blockFromStage(by: .peer(host), in: room, userID: "timed", durationS: 30)
        _ = try registry.blockFromStage(by: .peer(host), in: room, userID: "forever", durationS: nil)

        let snapshot = registry.snapshot(of: room)
        #expect(snapshot.stage.requests.count == 5 && snapshot.stage.blocks.count == 2)
        let decoded = try RoomSnapshot(json: snapshot.encodeJSON())
        #expect(decoded == snapshot)

        let (other, otherClock) = Fixtures.registry()
        otherClock.now = clock.now
        let restored = try #require(other.restore(decoded, graceMillis: 600_000))
        #expect(other.snapshot(of: restored) == snapshot, "nothing lost or added")
        #expect(restored.stage.request(ids[3])?.position == 1 && restored.stage.request(ids[4])?.position == 2)
        #expect(restored.stage.request(ids[0])?.status == .live)
        let peer3 = try #require(restored.peer(viewers[3].id))
        #expect(code { _ = try other.requestStage(by: peer3, note: nil) } == nil, "one request per user, still")
        #expect(restored.stage.waitingCount == 2, "the same request answered")
        #expect(
            restored.stage.isBlocked("forever", at: otherClock.now)
                && restored.stage.isBlocked("timed", at: otherClock.now)
        )

        // The invitation's token was lost with its home: at its end the request waits again, first.
        let invited = try #require(restored.stage.request(ids[1]))
        let end = try #require(invited.invitationEndsAt)
        otherClock.now = end - 1
        _ = other.expireDue()
        #expect(restored.stage.request(ids[1])?.status == .invited, "1 ms before its end")
        otherClock.now = end
        _ = other.expireDue()
        #expect(restored.stage.request(ids[1])?.status == .waiting && restored.stage.position(of: ids[1]) == 1)
        otherClock.now = clock.now + 30_000
        _ = other.expireDue()
        #expect(!restored.stage.isBlocked("timed", at: otherClock.now) && restored.stage.blocks["timed"] == nil)
    }
}

extension StageQueueTests {
    @Test func blocksAndReasonsAreBounded() throws {
        let (registry, _) = Fixtures.registry()
        let host = try registry.join(Fixtures.request("h", role: "host")).peer
        let room = host.room
        for n in 0..<RoomRegistry.maxStageBlocks {
            _ = try registry.blockFromStage(by: .peer(host), in: room, userID: UserID("u\(n)"), durationS: nil)
        }
        #expect(
            code { _ = try registry.blockFromStage(by: .peer(host), in: room, userID: "one-more", durationS: nil) }
                == .tooMany
        )
        #expect(
            code { _ = try registry.blockFromStage(by: .peer(host), in: room, userID: "u7", durationS: 60) } == nil,
            "a blocked user's block may change"
        )
        let viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        let id = try registry.requestStage(by: viewer, note: nil).0.id
        let long = String(repeating: "r", count: RoomRegistry.maxStageReasonBytes + 1)
        #expect(
            code { _ = try registry.declineStage(by: .peer(host), in: room, requestID: id, reason: long) } == .tooLarge
        )
    }
}
