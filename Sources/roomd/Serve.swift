import ArgumentParser
import Foundation
import Logging
import RoomCluster
import RoomConfig
import RoomModel
import RoomServer

// swift-format-ignore: AvoidRetroactiveConformances
// `--log-level info`: an executable target, so nothing imports this conformance.
extension Logger.Level: @retroactive ExpressibleByArgument {}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve rooms (the default command).",
        version: roomdVersion
    )

    @Option(help: "The role template (JSON).") var config: String
    @Option(help: "Address to listen on.") var host: String = "127.0.0.1"
    @Option(help: "Port to listen on; 0 picks a free one.") var port: Int = 7880
    @Option(help: "File holding the HS256 secret (else $ROOMD_SECRET).") var secretFile: String?
    @Option(help: "Required access_key claim of app tokens (else $ROOMD_ACCESS_KEY).") var accessKey: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.") var logLevel: Logger.Level = .info
    @Flag(help: "Unknown template keys and permission names are errors, not warnings.") var strict = false
    @Flag(
        help:
            "Shut down (as on SIGTERM) when standard input reaches its end: a harness passes a pipe, and roomd goes when the harness does."
    )
    var exitWithStdin = false
    @Option(
        help:
            "Run as a node of a cluster on this NATS server (nats-server -js): nats://HOST:PORT. Overrides settings.cluster.nats_url."
    )
    var cluster: String?
    @Option(help: "This node's id in the cluster, [A-Za-z0-9_-]{1,64}; default HOSTNAME-PORT (the bound port).")
    var nodeID: String?
    @Option(
        help:
            "Service threads: each is a node of the cluster (needs --cluster) listening on the same port, so capacity grows with cores. Node ids get -t1, -t2, ... appended."
    )
    var threads: Int = 1
    @Flag(
        help:
            "Listen with SO_REUSEPORT, so that other roomd nodes of the same cluster can listen on this port too (needs --cluster)."
    )
    var reusePort = false
    @Flag(
        inversion: .prefixedNo,
        help:
            "permessage-deflate (RFC 7692) for the clients that offer it (browsers do): each push compressed once for all of them."
    )
    var permessageDeflate = true
    @Option(
        help:
            "With --cluster: seconds a SIGTERM/SIGINT drain may take (1..300): the node hands its rooms to other nodes, closes its connections with 1012, and exits 0 when done or when this passed. Without --cluster it changes nothing."
    )
    var drainTimeout: Int = 10
    @Flag(
        help:
            "Test mode for integration-test harnesses (PROTOCOL.md section 25): /v2/test/* routes, --clock manual, --seed. Loopback --host only; never in production."
    )
    var testMode = false
    @Option(help: "system, or manual (with --test-mode): the clock moves only by POST /v2/test/clock.")
    var clock: ClockKind = .system
    @Option(help: "With --clock manual: the clock's start in ms since the epoch (default: the time at start).")
    var clockStart: Int64?
    @Option(help: "With --test-mode: every server id is drawn from one stream seeded with N, so runs repeat.")
    var seed: UInt64?

    enum ClockKind: String, ExpressibleByArgument, CaseIterable {
        case system, manual
    }

    func validate() throws {
        if clock == .manual, !testMode { throw ValidationError("--clock manual: needs --test-mode") }
        if clockStart != nil, clock != .manual { throw ValidationError("--clock-start: needs --clock manual") }
        if let clockStart, clockStart < 0 { throw ValidationError("--clock-start: must be ≥ 0, got \(clockStart)") }
        if seed != nil, !testMode { throw ValidationError("--seed: needs --test-mode") }
        try validatePort(port, name: "--port", range: 0...65535)
        if !(1...300).contains(drainTimeout) {
            throw ValidationError("--drain-timeout: must be between 1 and 300 seconds, got \(drainTimeout)")
        }
        if !(1...64).contains(threads) { throw ValidationError("--threads: must be between 1 and 64, got \(threads)") }
        if let cluster, let problem = ClusterSettings.natsURLProblem(cluster) {
            throw ValidationError("--cluster: \(problem)")
        }
        if let nodeID, !ClusterConfig.isValidNodeID(nodeID) {
            throw ValidationError("--node-id: must be \(ClusterConfig.nodeIDRule), got \"\(nodeID.prefix(100))\"")
        }
    }

    func run() throws {
        Signals.block()
        let template = loadTemplate(config, strict: strict)
        let clusterURL = cluster ?? template.settings.cluster.natsURL
        if nodeID != nil, clusterURL == nil {
            fail("--node-id: needs --cluster nats://HOST:PORT (or settings.cluster.nats_url)", code: 64)
        }
        // Nodes sharing a port must share their rooms: without the bus each
        // would hold its own copy of a room, and peers would not meet.
        if threads > 1, clusterURL == nil {
            fail(
                "--threads: needs --cluster nats://HOST:PORT (or settings.cluster.nats_url): the threads are nodes of a cluster",
                code: 64
            )
        }
        if reusePort, clusterURL == nil {
            fail(
                "--reuse-port: needs --cluster nats://HOST:PORT (or settings.cluster.nats_url): nodes sharing a port must share their rooms",
                code: 64
            )
        }
        let environment = ProcessInfo.processInfo.environment
        if threads > 1 || reusePort, environment["ROOMD_EVENT_LOOP"] == "poll" {
            fail(
                "\(threads > 1 ? "--threads" : "--reuse-port"): sharing a port needs the libev loop, not ROOMD_EVENT_LOOP=poll",
                code: 64
            )
        }
        if testMode, !Secrets.isLoopback(host) {
            fail("--test-mode: only on a loopback --host (127.0.0.1, ::1, localhost), got \(host)", code: 64)
        }
        if testMode, threads > 1 {
            fail("--test-mode: one service thread only (--threads 1): the manual clock is the thread's", code: 64)
        }
        var secret: [UInt8]?
        do { secret = try Secrets.load(file: secretFile) } catch { fail("\(error)") }
        let devSecret = secret == nil
        if devSecret, !Secrets.isLoopback(host) {
            fail("no secret: pass --secret-file or set ROOMD_SECRET to listen on \(host)")
        }
        // Dev mode on a fixed port: the same secret across restarts.
        var stableDevSecret: (secret: [UInt8], path: String, reused: Bool)?
        if devSecret, port != 0 {
            do { stableDevSecret = try Secrets.stableDevSecret(port: port) } catch { fail("\(error)", code: 1) }
            secret = stableDevSecret?.secret
        }
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "roomd")
        var options = ServerOptions(
            host: host,
            port: port,
            template: template,
            secret: secret ?? Secrets.random(),
            accessKey: accessKey ?? environment["ROOMD_ACCESS_KEY"].flatMap { $0.isEmpty ? nil : $0 },
            clusterURL: clusterURL,
            nodeID: nodeID.map(NodeID.init)
        )
        options.webhookSecret = environment["ROOMD_WEBHOOK_SECRET"].flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        options.reusePort = reusePort || threads > 1
        options.permessageDeflate = permessageDeflate
        options.serversInProcess = threads
        options.drainTimeoutMillis = drainTimeout * 1000
        if testMode {
            options.testMode = TestMode(
                clockStart: clock == .manual ? clockStart ?? Int64(Date().timeIntervalSince1970 * 1000) : nil,
                seed: seed
            )
            logger.warning(
                "test mode: /v2/test/* is on; never use it in production",
                metadata: ["clock": "\(clock.rawValue)", "seed": "\(seed.map(String.init) ?? "random")"]
            )
        }
        let servers = (1...threads).map { thread in
            var mine = options
            if threads > 1 { mine.serviceThread = thread }
            return RoomServer(options: mine, logger: threads > 1 ? logger.with(thread: thread) : logger)
        }
        let server = servers[0]
        let (path, strict) = (config, strict)
        Signals.install(servers, logger: logger) {
            do throws(TemplateError) {
                let (template, warnings) = try RoleTemplate.load(path: path, strict: strict)
                for warning in warnings { logger.warning("template reload: \(warning)") }
                return template
            } catch {
                logger.error("template reload failed, keeping the old template: \(error.description)")
                return nil
            }
        }
        if exitWithStdin {
            let watcher = Thread {
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) > 0 {}
                logger.notice("standard input closed: shutting down")
                for server in servers { server.shutdown() }
            }
            watcher.name = "roomd-stdin"
            watcher.start()
        }
        let boundPort: Int
        do {
            boundPort = try server.start()
            // The other threads listen on the port the first one bound (SO_REUSEPORT).
            for other in servers.dropFirst() { _ = try other.start(port: boundPort) }
            for server in servers { server.linkSiblings(servers) }
        } catch {
            fail(
                "cannot listen on \(host):\(port): the port is in use or not allowed; choose another --port, or --port 0 for a free one",
                code: 1
            )
        }
        var devSecretPath: String?  // a per-run secret (port 0), deleted at exit
        if let stable = stableDevSecret {
            logger.notice(
                stable.reused
                    ? "no secret configured: using this port's dev secret, kept across restarts"
                    : "no secret configured: made a dev secret for this port, kept across restarts",
                metadata: ["secret_file": "\(stable.path)"]
            )
        } else if devSecret {
            let path = Secrets.devSecretPath(port: boundPort)
            do { try Secrets.writePrivate(options.secret, to: path) } catch { fail("\(error)", code: 1) }
            devSecretPath = path
            logger.notice(
                "no secret configured: using a random one for this run (port 0)",
                metadata: ["secret_file": "\(path)"]
            )
        }
        logger.info(
            "template loaded",
            metadata: [
                "template": "\(template.name)", "roles": "\(template.roleNames.joined(separator: ","))",
                "event_loop": "\(server.eventLoop)", "threads": "\(threads)",
            ]
        )
        print("roomd listening on ws://\(host.contains(":") ? "[\(host)]" : host):\(boundPort)/ws")
        fflush(nil)
        // Each server runs on a thread of its own; the main thread serves the first.
        let finished = servers.dropFirst().map { other in
            let done = DispatchSemaphore(value: 0)
            let thread = Thread {
                other.run()
                done.signal()
            }
            thread.stackSize = 8 << 20
            thread.name = "roomd-service"
            thread.start()
            return done
        }
        server.run()
        for done in finished { done.wait() }
        if let devSecretPath { unlink(devSecretPath) }
    }
}

extension Logger {
    /// The logger of service thread `thread` (`--threads`): its lines say which.
    func with(thread: Int) -> Logger {
        var logger = self
        logger[metadataKey: "thread"] = "\(thread)"
        return logger
    }
}

/// Loads and validates a template; on error prints every problem as a
/// `PATH: PROBLEM` line and exits 2.
func loadTemplate(_ path: String, strict: Bool = false) -> RoleTemplate {
    do {
        let (template, warnings) = try RoleTemplate.load(path: path, strict: strict)
        for warning in warnings { FileHandle.standardError.write(Data("warning: \(warning)\n".utf8)) }
        return template
    } catch {
        // Exactly `PATH: PROBLEM`, as harnesses match the whole line.
        FileHandle.standardError.write(Data("\(error.description)\n".utf8))
        exit(2)
    }
}

/// Prints to stderr and exits (2: bad configuration).
func fail(_ message: String, code: Int32 = 2) -> Never {
    FileHandle.standardError.write(Data("roomd: \(message)\n".utf8))
    exit(code)
}

/// A usage error (exit 64) for a port out of range, before any conversion can trap.
func validatePort(_ port: Int, name: String, range: ClosedRange<Int>) throws {
    if !range.contains(port) {
        throw ValidationError("\(name): must be between \(range.lowerBound) and \(range.upperBound), got \(port)")
    }
}
