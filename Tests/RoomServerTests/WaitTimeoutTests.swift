import Foundation
import RoomClient
import RoomdTesting
import Synchronization
import Testing

/// A wait that runs out of time says what it waited for, for how long, from
/// which line, and what was queued instead (issue 25, item 1).
@Suite struct WaitTimeoutTests {
    /// A host and a guest in one room; the host's inbox holds the guest's `on-peer-join`.
    fileprivate func room() async throws -> (RoomdProcess, host: RoomClient, guest: RoomClient, guestID: String) {
        let roomd = try RoomdProcess.start(binary: Daemon.binary, template: Daemon.patientTemplate())
        let host = try await RoomClient.connect(to: roomd.url)
        _ = try await host.join(token: try roomd.tokens.appToken(room: "show", user: "host-1", role: "host"))
        let guest = try await RoomClient.connect(to: roomd.url)
        let joined = try await guest.join(
            token: try roomd.tokens.appToken(room: "show", user: "guest-1", role: "guest")
        )
        // The join push is queued once the guest's peer-update below arrives after it.
        _ = try await guest.updatePeer(name: "Ada Lovelace")
        _ = try await host.next("on-peer-update", where: { $0["peer"]?["info"]?["name"] == "Ada Lovelace" })
        return (roomd, host, guest, joined.peer.peerID)
    }

    @Test func aMethodWaitNamesTheMethodTheTimeoutTheLineAndTheQueuedPushes() async throws {
        let (roomd, host, _, guestID) = try await room()
        defer { _ = roomd.stop() }
        let line = #line + 4  // the line of the `next` call below
        var report: WaitTimeout?
        try await withKnownIssue("the timeout is recorded at the waiting line") {
            do {
                _ = try await host.next("on-role-change-request", timeout: .milliseconds(300))
            } catch RoomClientError.timeout(let timeout) {
                report = timeout
            }
        } matching: { issue in
            issue.sourceLocation?.line == line
                && issue.sourceLocation?.fileID.hasSuffix("WaitTimeoutTests.swift") == true
        }
        let timeout = try #require(report)
        #expect(timeout.waitedFor == "on-role-change-request")
        #expect(timeout.timeout == .milliseconds(300))
        #expect(timeout.line == line)
        #expect(timeout.queuedCount == 1 && timeout.queued.first?.hasPrefix("on-peer-join {") == true)
        #expect(timeout.queued.first?.contains(guestID) == true, "the excerpt shows the push's params")
        #expect(
            timeout.description.hasPrefix(
                "WaitTimeoutTests.swift:\(line): timed out after 300 ms waiting for on-role-change-request; 1 entry queued: on-peer-join {"
            ),
            "\(timeout.description)"
        )
        // Nothing was consumed: the queued push is still there.
        #expect(try await host.next("on-peer-join")["peer"]?["peer_id"]?.stringValue == guestID)
    }

    @Test func aPredicateWaitSaysItsDescriptionAndAnEmptyInboxSaysSo() async throws {
        let (roomd, host, guest, guestID) = try await room()
        defer { _ = roomd.stop() }
        _ = host.drain()
        try await guest.broadcast("hello")
        // Issues recorded in withKnownIssue are all "known": the reports are checked outside it.
        var goodbye: WaitTimeout?
        await withKnownIssue {
            do {
                _ = try await host.next(
                    "on-broadcast",
                    where: { $0["info"]?["message"] == "goodbye" },
                    description: "the goodbye",
                    timeout: .milliseconds(200)
                )
            } catch RoomClientError.timeout(let timeout) {
                goodbye = timeout
            }
        }
        let report = try #require(goodbye, "no goodbye was sent: the wait timed out")
        #expect(report.waitedFor == "on-broadcast where the goodbye")
        #expect(report.queued.count == 1 && report.queued[0].hasPrefix("on-broadcast {\"message_id\":"), "\(report)")
        // The predicate gets the params: the hello matches.
        let hello = try await host.next("on-broadcast", where: { $0["info"]?["message"] == "hello" })
        #expect(hello["info"]?["message"] == "hello" && hello["sender"]?["peer_id"]?.stringValue == guestID)
        var roomEnd: WaitTimeout?
        await withKnownIssue {
            do {
                _ = try await host.next(timeout: .milliseconds(100), description: "a room end") { event in
                    if case .peerLeaveRequest(_, _, roomEnd: true) = event { true } else { nil }
                }
            } catch RoomClientError.timeout(let timeout) {
                roomEnd = timeout
            }
        }
        let ended = try #require(roomEnd)
        #expect(ended.description.hasSuffix("waiting for a room end; nothing queued"), "\(ended)")
    }

    @Test func aCallThatTimesOutNamesItsMethod() {
        let timeout = WaitTimeout(waitedFor: "the answer to join", timeout: .seconds(5))
        #expect(
            RoomClientError.timeout(timeout).description
                == "timed out after 5 s waiting for the answer to join; nothing queued"
        )
        let long = WaitTimeout.summary(of: [
            "jsonrpc": "2.0", "method": "on-broadcast",
            "params": ["info": ["message": .string(String(repeating: "x", count: 200))]],
        ])
        #expect(long.count == "on-broadcast ".count + 80 && long.hasSuffix("…"))
    }
}

extension WaitTimeoutTests {
    /// A test that means a wait to run out says so, and no issue is recorded.
    @Test func anExpectedTimeoutRecordsNoIssue() async throws {
        let (roomd, host, _, _) = try await room()
        defer { _ = roomd.stop() }
        await #expect(throws: RoomClientError.self) {
            try await TimeoutIssues.expectingTimeouts {
                try await host.next("on-role-change-request", timeout: .milliseconds(100))
            }
        }
    }
}

extension WaitTimeoutTests {
    /// A misspelled push name fails at once, naming the close ones, instead
    /// of waiting out the timeout (issue 38).
    @Test func aMisspelledPushFailsAtOnceNamingTheCloseOnes() async throws {
        let (roomd, host, _, _) = try await room()
        defer { _ = roomd.stop() }
        let started = ContinuousClock.now
        let error = await #expect(throws: RoomClientError.self) {
            try await host.next("on-role-change-requested", timeout: .seconds(30))
        }
        #expect(ContinuousClock.now - started < .seconds(1))
        #expect(
            error
                == .unknownPush(
                    "on-role-change-requested",
                    suggestions: ["on-role-change-request", "on-role-change-rejected"]
                )
        )
        #expect(
            error?.description
                == "unknown push \"on-role-change-requested\": did you mean on-role-change-request, on-role-change-rejected?"
        )
        await #expect(throws: RoomClientError.unknownPush("peer-join", suggestions: ["on-peer-join"])) {
            try await host.next("peer-join", where: { _ in true }, timeout: .seconds(30))
        }
        // The known names still wait: the guest's join is queued.
        #expect(try await host.next("on-peer-join")["peer"] != nil)
    }
}

extension WaitTimeoutTests {
    /// A wait that times out and is not caught fails the test once: the
    /// error it throws, which names the line that waited (issue 38).
    @Test func anUncaughtTimeoutIsRecordedOnce() async throws {
        let (roomd, host, _, _) = try await room()
        defer { _ = roomd.stop() }
        let line = #line + 3  // the line of the `next` call below
        let issues = IssueLog()
        try await withKnownIssue {
            _ = try await host.next("on-role-change-request", timeout: .milliseconds(200))
        } matching: { issue in
            issues.issues.withLock { $0.append(issue) }
            return true
        }
        let failures = issues.issues.withLock { $0 }.filter(\.isFailure)
        #expect(failures.count == 1, "\(failures)")
        #expect(failures.first?.description.contains("WaitTimeoutTests.swift:\(line): timed out") == true)
    }
}

/// The issues a `withKnownIssue` matcher saw.
private final class IssueLog: Sendable {
    let issues = Mutex<[Issue]>([])
}
