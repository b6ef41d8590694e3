import Foundation
import RoomClient
import RoomdTesting
import Testing

/// The RoomdTesting library as a harness uses it.
@Suite struct RoomdTestingTests {
    @Test func startsOnAFreePortServesTokensItMintsAndStopsCleanly() async throws {
        let roomd = try RoomdProcess.start(binary: Daemon.binary)
        let other = try RoomdProcess.start(binary: Daemon.binary)
        #expect(roomd.port != other.port && roomd.directory != other.directory, "parallel harnesses do not collide")
        let client = try await RoomClient.connect(to: roomd.url)
        let joined = try await client.join(token: try roomd.tokens.appToken(room: "show", user: "host-1", role: "host"))
        #expect(joined.peer.role == "host")
        let value: JSON = ["a": 1]  // JSON comes with `import RoomClient`
        #expect(value["a"] == 1)
        #expect(roomd.stop() == 0)
        #expect(!roomd.isRunning)
        #expect(!FileManager.default.fileExists(atPath: roomd.directory.path), "its temporary files are gone")
        #expect(other.stop() == 0)
    }

    @Test func aFailedStartSaysWhyWithTheDaemonsStderr() throws {
        let error = try #require(throws: RoomdProcessError.self) {
            try RoomdProcess.start(binary: Daemon.binary, template: .json(#"{"roles":{"host":{"priority":9}}}"#))
        }
        #expect(error.description.contains("roles.host.priority: must be between 1 and 5, got 9"))
        let missing = try #require(throws: RoomdProcessError.self) {
            try RoomdProcess.locateBinary("/nonexistent/roomd")
        }
        #expect(missing.description.contains("swift build --product roomd"))
    }

    @Test func theDaemonGoesWhenItsHarnessDies() async throws {
        // What RoomdProcess relies on when the test process is killed: roomd
        // started with --exit-with-stdin shuts down once its stdin closes.
        let direct = Process()
        direct.executableURL = URL(fileURLWithPath: Daemon.binary)
        direct.arguments = ["--config", Daemon.shippedConfig, "--port", "0", "--exit-with-stdin"]
        let stdin = Pipe()
        direct.standardInput = stdin
        direct.standardOutput = Pipe()
        direct.standardError = Pipe()
        try direct.run()
        try await Task.sleep(for: .milliseconds(300))
        try stdin.fileHandleForWriting.close()  // the harness is gone
        let deadline = Date().addingTimeInterval(5)
        while direct.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!direct.isRunning)
        #expect(direct.terminationStatus == 0)
    }
}
