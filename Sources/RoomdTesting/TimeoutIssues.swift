import RoomClient
import Testing

/// Makes a wait that times out (``RoomClient/next(_:timeout:fileID:filePath:line:column:)``,
/// the typed `next`, `nextEvent`, `nextMessage`) record a Swift Testing
/// warning at the line that waited, with the whole account (what it waited
/// for, the timeout, the pushes queued instead), besides throwing
/// ``RoomClientError/timeout(_:)`` as always.
///
/// A warning, not an error: the thrown error, when the test lets it out,
/// is the one failure (its text starts with the waiting file and line), so
/// a timeout is not recorded twice (issue 38); a timeout the test catches
/// and handles leaves only the warning pointing at the line.
///
/// ``RoomdProcess/start(binary:template:secret:host:arguments:environment:limits:testMode:timeout:)``
/// calls it, so a harness that starts its daemon with RoomdProcess has it
/// without asking. Outside a Swift Testing test (XCTest, a tool) it records
/// nothing. Calls after the first do nothing.
///
/// A test that means a wait to time out (nothing may arrive) should say so,
/// and no warning is recorded: prefer ``RoomClient/expectSilence(for:)``,
/// or wrap the wait in ``expectingTimeouts(_:)``:
///
/// ```swift
/// await #expect(throws: RoomClientError.self) {
///     try await TimeoutIssues.expectingTimeouts { try await viewer.next("on-broadcast", timeout: .milliseconds(300)) }
/// }
/// ```
public enum TimeoutIssues {
    public static func install() {
        _ = installed
    }

    @TaskLocal private static var expected = false

    /// Runs `body` with its waits' timeouts expected: they still throw
    /// ``RoomClientError/timeout(_:)``, but record no warning.
    public static func expectingTimeouts<T>(_ body: () async throws -> T) async rethrows -> T {
        try await $expected.withValue(true) { try await body() }
    }

    private static let installed: Void = WaitTimeout.setReporter { timeout in
        // The reporter runs on the waiting task's timer, which inherits the
        // test's task-locals: Test.current is the test that waited.
        guard !expected, Test.current != nil, let fileID = timeout.fileID, let line = timeout.line else { return }
        let location = SourceLocation(
            fileID: fileID,
            filePath: timeout.filePath ?? fileID,
            line: line,
            column: timeout.column ?? 1
        )
        Issue.record(Comment(rawValue: timeout.description), severity: .warning, sourceLocation: location)
    }
}
