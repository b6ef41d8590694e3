import Foundation
import RoomWire
import RoomdTesting

/// A real HTTP receiver for webhooks on a free loopback port:
/// `scripts/webhook-receiver.py` run with python3. It verifies each request
/// with README.md's `verify` and logs one JSON line per request.
final class WebhookReceiver: @unchecked Sendable {
    enum Mode: String {
        case ok
        case failFirst = "fail-first"
        case hang
        case hangFirst = "hang-first"
        case holdFirst = "hold-first"
        /// The first `dripCount` requests: 200, then `dripPrefix` bytes of a 1-GiB body
        /// and one byte every 100 ms until roomd closes the connection.
        case dripFirst = "drip-first"
    }

    let process: ChildProcess
    let port: Int
    let log: URL
    var url: String { "http://127.0.0.1:\(port)/hooks" }

    init(
        mode: Mode = .ok,
        delayMillis: Int = 0,
        dripCount: Int = 8,
        dripPrefix: Int = 0,
        secret: [UInt8] = Daemon.defaultSecret
    ) throws {
        log = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString).jsonl")
        var environment = ProcessInfo.processInfo.environment
        environment["RECEIVER_SECRET"] = String(decoding: secret, as: UTF8.self)
        let stdout = try ChildPipe()
        process = try ChildProcess.spawn(
            "/usr/bin/env",
            [
                "python3", Daemon.packageRoot.appendingPathComponent("scripts/webhook-receiver.py").path,
                "--mode", mode.rawValue, "--log", log.path, "--delay-ms", "\(delayMillis)",
                "--release", log.path + ".release", "--drip-count", "\(dripCount)", "--drip-prefix", "\(dripPrefix)",
                "--readme", Daemon.packageRoot.appendingPathComponent("README.md").path,
            ],
            environment: environment,
            stdout: .descriptor(stdout.write.fileDescriptor)
        )
        try stdout.write.close()
        // Only a hang reaches the tests' usual 30 s: a python3 start on a loaded machine took over 10 s.
        guard
            let line = readLine(
                stdout.read.fileDescriptor,
                timeoutMillis: Int(Daemon.waitTimeout.components.seconds) * 1000
            ),
            let port = Int(line)
        else {
            process.terminate()
            throw DaemonError(description: "the webhook receiver printed no port")
        }
        self.port = port
    }

    deinit {
        process.signal(SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: log)
        try? FileManager.default.removeItem(atPath: log.path + ".release")
        try? FileManager.default.removeItem(atPath: log.path + ".closed")
    }

    /// `hold-first`: lets the held first request be answered (200).
    func release() {
        _ = FileManager.default.createFile(atPath: log.path + ".release", contents: nil)
    }

    /// Every request received so far, in arrival order.
    var requests: [JSON] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)) }
    }

    /// `drip-first`: the dripping answers whose connection roomd closed, in that order:
    /// `{id, received_ms, closed_ms, body_bytes_sent}`.
    var closedDrips: [JSON] {
        let text = (try? String(contentsOfFile: log.path + ".closed", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { try? JSON.parse(Array($0.utf8)) }
    }

    /// Waits until roomd closed `count` dripping answers (or `timeout` passes); returns them.
    func closedDrips(count: Int, timeout: Duration = .seconds(10)) async throws -> [JSON] {
        let deadline = ContinuousClock.now + timeout
        while closedDrips.count < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        return closedDrips
    }

    /// The events answered with a 2xx, in order.
    var delivered: [JSON] { requests.filter { $0["status"] == 200 }.compactMap { $0["event"] } }

    /// Waits until `condition` holds for the requests (or `timeout` passes); returns them.
    @discardableResult
    func wait(timeout: Duration = .seconds(10), until condition: ([JSON]) -> Bool) async throws -> [JSON] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let now = requests
            if condition(now) { return now }
            try await Task.sleep(for: .milliseconds(20))
        }
        return requests
    }

    /// Waits until `count` events were delivered; returns their types.
    func deliveredTypes(count: Int, timeout: Duration = .seconds(10)) async throws -> [String] {
        try await wait(timeout: timeout) { $0.filter { $0["status"] == 200 }.count >= count }
        return delivered.compactMap { $0["type"]?.stringValue }
    }
}

extension Daemon {
    /// Starts roomd with `settings.webhooks` pointing at `receiver` (plus `extra` members).
    static func start(
        webhooksTo url: String,
        extra: String = "",
        settings: String? = nil,
        arguments: [String] = []
    ) async throws -> Daemon {
        let member = #""webhooks":{"url":"\#(url)"\#(extra.isEmpty ? "" : "," + extra)}"#
        let others = settings.map { String($0.dropFirst().dropLast()) } ?? ""
        return try await start(
            settings: "{" + member + (others.isEmpty ? "" : "," + others) + "}",
            arguments: arguments
        )
    }

    /// A counter or gauge of `/metrics` (nil when absent), e.g. `roomd_webhook_dropped_total`.
    func metric(_ series: String) async throws -> Double? {
        let text = try await metricsText()
        for line in text.split(separator: "\n") where line.hasPrefix(series + " ") {
            return Double(line.dropFirst(series.count + 1).trimmingCharacters(in: .whitespaces))
        }
        return nil
    }
}
