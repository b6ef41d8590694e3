import ArgumentParser
import Foundation

/// roombench: a load generator for roomd (and, with `--raw`, for any
/// WebSocket server that mirrors text messages, e.g. libwebsockets-test-server's
/// `lws-mirror-protocol`; with `--protocol nats`, fan-out through nats-server's
/// WebSocket listener). One process, one lws client loop, thousands of
/// connections. Every run prints a table line and, with `--json FILE`,
/// appends one JSON object per line; scripts/bench/report.py turns a run's
/// lines into docs/BENCHMARKS.md.
@main
struct RoomBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "roombench",
        abstract: "Load generator for roomd, nats-server over WebSocket (fan-out) and the lws mirror floor.",
        subcommands: [
            JoinStorm.self, Fanout.self, Rooms.self, Idle.self, Speakers.self, Micro.self, PollVotes.self, Taps.self,
            HistoryJoin.self, Questions.self, StageAudience.self, AudienceCost.self, HookServerCommand.self,
        ]
    )
}

/// What the server at `--url` speaks.
enum WireProtocol: String, ExpressibleByArgument, CaseIterable {
    /// roomd: tokens, JSON-RPC `join` and `broadcast`.
    case roomd
    /// A plain WebSocket server that mirrors text (the lws mirror).
    case raw
    /// nats-server's WebSocket listener: `CONNECT`, `SUB`, `PUB`, `MSG` (fan-out only).
    case nats
}

struct TargetOptions: ParsableArguments {
    @Option(
        name: .customLong("url"),
        help: ArgumentHelp(
            "Server URL, e.g. ws://127.0.0.1:7880/ws (roomd), ws://127.0.0.1:7681/ (lws mirror), ws://127.0.0.1:8080/ (nats-server)."
                + " Repeatable (fan-out only): receivers are spread round-robin over the URLs, the sender uses the first."
        )
    )
    var urls: [String] = []

    /// The first `--url`: the sender's, and the only one of every scenario but fan-out.
    var url: String { urls.first ?? "" }

    @Flag(
        name: .customLong("raw"),
        help: "Plain WebSocket server that mirrors text (no tokens, no JSON-RPC); the same as --protocol raw."
    )
    var rawFlag = false

    @Option(
        name: .customLong("protocol"),
        help: "roomd, raw (a mirror server) or nats (nats-server over WebSocket; fan-out only)."
    )
    var wire: WireProtocol = .roomd

    /// Not roomd: no tokens, no JSON-RPC.
    var raw: Bool { rawFlag || wire != .roomd }
    var nats: Bool { wire == .nats }

    @Option(help: "Sec-WebSocket-Protocol in --raw mode.")
    var subprotocol = "lws-mirror-protocol"

    @Flag(
        help:
            "Offer permessage-deflate (as browsers do) and inflate compressed frames (the same compressed push is inflated once)."
    )
    var deflate = false

    @Option(help: "roomd's HS256 secret file (tokens are minted with it).")
    var secretFile: String?

    @Option(
        name: .customLong("server-pid"),
        help:
            "PID of the server, for RSS and CPU from /proc. Repeatable (a cluster's nodes, fan-out): the first is the one sampled for RSS; every one's CPU is recorded as node_cpu_pct."
    )
    var serverPIDs: [Int32] = []

    var serverPID: Int32? { serverPIDs.first }

    @Option(help: "Append one JSON object per result line to this file.")
    var json: String?

    @Option(help: "Name of the target in the output (default roomd, or raw with --raw).")
    var label: String?

    @Option(help: "Seconds allowed for all WebSocket handshakes.")
    var connectTimeout: Double = 60

    @Option(help: "Seconds allowed for all joins.")
    var joinTimeout: Double = 60

    @Flag(help: "Skip the RoomClient probe (ping / echo) before the run.")
    var noProbe = false

    @Option(
        help:
            "nats-server monitoring URL (http://127.0.0.1:PORT): its /varz in_msgs and out_msgs are read before and after each fan-out step (the bus messages of a cluster step, or nats-server's own count)."
    )
    var varz: String?

    @Option(
        name: .customLong("max-server-rss-mib"),
        help: "Stop the scenario if the server's RSS exceeds this (0: no limit)."
    )
    var maxServerRSSMiB = 8192

    mutating func validate() throws {
        guard !urls.isEmpty else { throw ValidationError("--url is required") }
        if rawFlag { wire = wire == .roomd ? .raw : wire }
    }
}

/// Raises the open-file limit to the hard limit (the script runs `ulimit -n` too).
func raiseFileLimit(needed: Int) throws {
    var limit = rlimit()
    getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }
    if Int(limit.rlim_cur) < needed + 64 {
        throw BenchError(
            "open-file limit \(limit.rlim_cur) is too low for \(needed) connections: run `ulimit -n \(needed + 1024)` first"
        )
    }
}

/// `fanout`: the only scenario that speaks NATS and spreads over several `--url`s.
func prepare(_ target: TargetOptions, connections: Int, fanout: Bool = false) throws -> Bench {
    if !fanout {
        guard !target.nats else { throw BenchError("--protocol nats: fan-out only") }
        guard target.urls.count == 1 else { throw BenchError("several --url: fan-out only") }
    }
    try raiseFileLimit(needed: connections)
    let bench = try Bench(options: target)
    if !target.noProbe, !target.nats { try bench.probe() }
    return bench
}

func exitOnError(_ body: () throws -> Void) throws {
    do { try body() } catch let error as BenchError {
        FileHandle.standardError.write(Data("roombench: \(error)\n".utf8))
        throw ExitCode(1)
    }
}

struct JoinStorm: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "join-storm",
        abstract: "(a) N peers join one room at once: joins/s."
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Number of peers.") var peers = 5000
    @Option(help: "Role of the joining peers.") var role = "viewer"
    @Option(
        help:
            "Seconds without a frame that end the wait for the pushes the joins caused (more than room_state_interval_ms to count every room-state)."
    )
    var settleQuiet = 0.5

    func run() throws {
        try exitOnError {
            let bench = try prepare(target, connections: peers)
            try bench.joinStorm(
                peers: peers,
                role: role,
                settleQuiet: settleQuiet,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

struct Fanout: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "(b) One sender broadcasting at R msg/s into a room of N receivers: deliveries/s, latency, loss."
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Number of receivers.") var receivers = 1000
    @Option(help: "Comma-separated send rates (msg/s), run in order; stops after an overloaded step.")
    var rates = "250,500,1000,2000"
    @Option(help: "Seconds of sending per rate.") var duration = 4.0
    @Option(help: "Seconds allowed after sending for deliveries to arrive.") var drain = 3.0
    @Option(help: "Size of each message text in bytes (the marker is 27).") var messageBytes = 100

    func run() throws {
        try exitOnError {
            let list = rates.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !list.isEmpty, list.allSatisfy({ $0 > 0 }) else {
                throw BenchError("--rates: expected e.g. 250,500,1000")
            }
            let bench = try prepare(target, connections: receivers + 1, fanout: true)
            try bench.fanout(
                receivers: receivers,
                rates: list,
                duration: duration,
                drain: drain,
                messageBytes: messageBytes,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

struct Rooms: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "(c) M rooms x K peers, everyone sending: latency p50/p99."
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Number of rooms.") var rooms = 1000
    @Option(help: "Peers per room.") var perRoom = 10
    @Option(help: "Messages per second per peer.") var rate = 1.0
    @Option(help: "Seconds of sending.") var duration = 10.0
    @Option(help: "Seconds allowed after sending for deliveries to arrive.") var drain = 3.0
    @Option(help: "Size of each message text in bytes.") var messageBytes = 100
    @Option(help: "Role of every peer.") var role = "guest"

    func run() throws {
        try exitOnError {
            let bench = try prepare(target, connections: rooms * perRoom)
            try bench.manyRooms(
                rooms: rooms,
                perRoom: perRoom,
                rate: rate,
                duration: duration,
                drain: drain,
                messageBytes: messageBytes,
                role: role,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}

struct Idle: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "(d) N joined peers in one room doing nothing: server RSS and CPU."
    )

    @OptionGroup var target: TargetOptions
    @Option(help: "Number of peers.") var peers = 10000
    @Option(help: "Role of the peers.") var role = "viewer"
    @Option(help: "Seconds of idleness measured.") var window = 5.0
    @Option(help: "After the window: this many more peers join one at a time (join latency into a room of --peers).")
    var probeJoins = 0

    func run() throws {
        try exitOnError {
            let bench = try prepare(target, connections: peers + probeJoins)
            try bench.idle(
                peers: peers,
                role: role,
                window: window,
                probeJoins: probeJoins,
                connectTimeout: target.connectTimeout,
                joinTimeout: target.joinTimeout
            )
        }
    }
}
