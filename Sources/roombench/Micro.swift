import ArgumentParser
import Foundation
import Logging
import RoomConfig
import RoomModel
import RoomServer
import RoomTokens
import RoomWire

/// Results of the measured operations end up here, so that the optimizer
/// cannot drop the work. Written by the harness's one thread only.
nonisolated(unsafe) private var microSink = 0

/// `roombench micro`: a plain release-mode harness for roomd's hot paths,
/// called in-process through `package` entry points of RoomServer (no
/// sockets): JSON-RPC decode, push encode, fan-out enqueue.
///
/// It prints ns/op (the median of several timed rounds). Instructions and
/// allocations per op come from running it under valgrind (scripts/bench.sh):
/// (total with `--iterations N` − total with `--iterations 0`) ÷ N, where
/// both runs do the same setup and the same warm-up.
struct Micro: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Microbenchmarks of roomd's hot paths (JSON-RPC decode, push encode, fan-out enqueue): ns/op.",
        discussion: """
            Cases: decode-broadcast, decode-join (RoomWire JSON.parse of the call as roombench sends it), \
            encode-broadcast (Envelope.push(.broadcast) to a Frame), encode-peer-join (Envelope.push(.peerJoin) of \
            a peer with 2 tracks), encode-poll-stats (Envelope.push(.pollStats) of a 3-question quiz), fanout-enqueue (one shared Frame queued \
            on --recipients connections), fanout-dispatch (Dispatcher.fanOut of one broadcast delivery to \
            --recipients peers: encode once + every enqueue), word-filter (section 22's blocked words: a 4 KiB \
            message against 1,000 words). Groups: decode, encode, fanout (both fanout cases), moderation, all. \
            The fan-out cases use socket-less Connections (a harness-only init in RoomServer) and empty \
            every queue after each op, as a completed write would; that emptying is part of the op.
            For valgrind: --rounds 1, and a second run with --iterations 0 gives the setup to subtract.
            """
    )

    @Option(
        name: .customLong("case"),
        help: "Case names or groups, comma-separated (decode, encode, fanout, deflate, all, or a case name)."
    )
    var selection = "all"

    @Option(help: "Operations per timed round (0: setup and warm-up only, the baseline of a valgrind run).")
    var iterations = 5000

    @Option(help: "Timed rounds; ns/op is their median.")
    var rounds = 7

    @Option(help: "Untimed operations before the first round.")
    var warmup = 50

    @Option(help: "Role template (scripts/bench.sh passes the bench template).")
    var config = "config/roles.json"

    @Option(help: "Recipients of the fan-out cases.")
    var recipients = 1000

    @Option(help: "Append one JSON object per case to this file.")
    var json: String?

    func validate() throws {
        guard iterations >= 0, rounds >= 1, warmup >= 0, recipients >= 1 else {
            throw ValidationError("--iterations and --warmup must be ≥ 0, --rounds and --recipients ≥ 1")
        }
        _ = try Self.caseNames(selection)
    }

    static let allCases = [
        "decode-broadcast", "decode-join", "encode-broadcast", "encode-peer-join", "encode-poll-stats",
        "fanout-enqueue",
        "fanout-dispatch", "word-filter", "deflate-broadcast", "deflate-chat", "deflate-reactions",
        "deflate-questions",
    ]

    /// The cases whose input is fixed text: no room, no peers to build.
    static let roomless: Set = [
        "decode-broadcast", "decode-join", "word-filter", "deflate-chat", "deflate-reactions", "deflate-questions",
    ]

    static func caseNames(_ selection: String) throws -> [String] {
        var names: [String] = []
        for item in selection.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let group: [String] =
                switch item {
                case "all": allCases
                case "decode": ["decode-broadcast", "decode-join"]
                case "encode": ["encode-broadcast", "encode-peer-join", "encode-poll-stats"]
                case "fanout": ["fanout-enqueue", "fanout-dispatch"]
                case "moderation": ["word-filter"]
                case "deflate": ["deflate-broadcast", "deflate-chat", "deflate-reactions", "deflate-questions"]
                default: allCases.contains(item) ? [item] : []
                }
            guard !group.isEmpty else {
                throw ValidationError(
                    "--case: unknown \(item) (decode, encode, fanout, deflate, all, \(allCases.joined(separator: ", ")))"
                )
            }
            for name in group where !names.contains(name) { names.append(name) }
        }
        return allCases.filter { names.contains($0) }  // a fixed order
    }

    func run() throws {
        let names = try Self.caseNames(selection)
        let template: RoleTemplate
        do { template = try RoleTemplate.load(path: config).template } catch {
            throw ValidationError("\(config): \(error)")
        }
        let needsRoom = names.contains { !Self.roomless.contains($0) }
        let needsQueues = names.contains { $0.hasPrefix("fanout") }
        let fixture = try MicroFixture(template: template, recipients: needsQueues ? recipients : 1, room: needsRoom)
        for name in names {
            let benchCase = fixture.benchCase(name)
            try measure(benchCase)
        }
    }

    private func measure(_ benchCase: MicroCase) throws {
        let op = benchCase.op
        for _ in 0..<warmup { op() }
        guard iterations > 0 else {
            print("micro \(benchCase.name): setup and \(warmup) warm-up ops only (valgrind baseline)")
            return
        }
        var perOp: [Double] = []
        for _ in 0..<rounds {
            let start = monoNanos()
            for _ in 0..<iterations { op() }
            perOp.append(Double(monoNanos() - start) / Double(iterations))
        }
        perOp.sort()
        let median = perOp[perOp.count / 2]
        var record = Record()
        record.set("scenario", "micro")
        record.set("case", benchCase.name)
        record.set("what", benchCase.what)
        record.set("iterations", iterations)
        record.set("rounds", rounds)
        record.set("ns_per_op", median, digits: 1)
        record.set("ns_per_op_min", perOp[0], digits: 1)
        record.set("ns_per_op_max", perOp[perOp.count - 1], digits: 1)
        record.set("bytes", benchCase.bytes)
        if let deflated = benchCase.deflatedBytes { record.set("deflated_bytes", deflated) }
        if let fanout = benchCase.recipients { record.set("recipients", fanout) }
        print(
            "micro \(benchCase.name.padding(toLength: 17, withPad: " ", startingAt: 0))"
                + String(format: "%10.1f ns/op", median)
                + "  (median of \(rounds) rounds × \(Fmt.int(iterations)); min \(String(format: "%.1f", perOp[0])))"
                + "  \(benchCase.what)"
        )
        fflush(nil)
        if let json { try record.append(to: json) }
        _ = microSink
    }
}

/// One measured operation.
struct MicroCase {
    var name: String
    var what: String
    /// Size of the input (decode) or of the frame (encode, fan-out).
    var bytes: Int
    var recipients: Int?
    /// The compressed frame's size (the deflate cases): what each recipient that negotiated permessage-deflate gets.
    var deflatedBytes: Int?
    var op: () -> Void
}

/// The inputs: the calls roombench itself sends, and a room whose broadcast
/// delivery goes to `recipients` peers, each on a socket-less Connection.
final class MicroFixture {
    let broadcastCall: [UInt8]
    let joinCall: [UInt8]
    let recipients: Int
    private var server: RoomServer?
    private var delivery: Delivery?
    private var frame: Frame?
    /// `on-peer-join` of the sender with its 2 tracks, and `on-poll-stats` of its quiz.
    private var peerJoin: Push?
    private var pollStats: Push?
    private var connections: [Connection] = []

    init(template: RoleTemplate, recipients: Int, room: Bool) throws {
        self.recipients = recipients
        let body = Marker.body(micros: 1_234_567_890_123, step: 1, sender: recipients, size: 100)
        broadcastCall =
            Array(#"{"jsonrpc":"2.0","id":12345,"method":"broadcast","params":{"info":{"message":""#.utf8)
            + body + Array(#""}}}"#.utf8)
        joinCall = Array(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(Self.sampleToken)"}}"#.utf8)
        guard room else { return }

        let secret = [UInt8](repeating: 0x42, count: 32)
        var logger = Logger(label: "roombench.micro")
        logger.logLevel = .critical
        let server = RoomServer(options: ServerOptions(template: template, secret: secret), logger: logger)
        // Setup only: with the large-room threshold at 0 the 1,000 joins cost
        // O(1) each instead of O(room) (they are not measured; under valgrind
        // they would dominate every run). The broadcast still reaches everyone.
        var joinTemplate = template
        joinTemplate.settings.room.largeRoomThreshold = 0
        let registry = RoomRegistry(template: joinTemplate)
        let limit = template.settings.limits.maxOutboundBytes
        do {
            let sender = try registry.join(
                JoinRequest(roomID: RoomID("fanout"), userID: UserID("sender"), roleName: "host", name: "sender")
            ).peer
            for i in 0..<recipients {
                let peer = try registry.join(
                    JoinRequest(
                        roomID: RoomID("fanout"),
                        userID: UserID("viewer-\(i)"),
                        roleName: "viewer",
                        name: "viewer-\(i)"
                    )
                ).peer
                let connection = Connection(discardingFor: i, maxQueuedBytes: limit)
                peer.endpoint = connection
                connections.append(connection)
            }
            let sent = try registry.broadcast(
                from: sender,
                message: String(decoding: body, as: UTF8.self),
                type: "chat",
                to: .everyone
            )
            guard let delivery = sent.deliveries.first, delivery.recipients.count == recipients else {
                throw BenchError("micro: the broadcast did not reach the \(recipients) recipients")
            }
            self.delivery = delivery
            frame = Envelope.push(delivery.push, policyChanges: [:])
            _ = try registry.addTrack(sender, id: "mic", kind: .audio, description: "microphone")
            _ = try registry.addTrack(sender, id: "cam", kind: .video, mute: true)
            peerJoin = .peerJoin(sender, withTracks: true)
            pollStats = try Self.quizStats(registry, host: sender, voters: recipients)
        } catch let error as RoomError {
            throw BenchError("micro: setting up the room failed: \(error.message)")
        }
        self.server = server
    }

    /// `on-poll-stats` of a started 3-question quiz (single choice, multiple
    /// choice, short answer) that up to 50 of the room's viewers answered.
    private static func quizStats(_ registry: RoomRegistry, host: Peer, voters: Int) throws -> Push {
        let poll = try registry.setPollInfo(by: host, PollInfoInput(title: "Tonight's quiz", type: .quiz))
        _ = try registry.setPollQuestions(
            by: host,
            pollID: poll.id,
            [
                QuestionInput(
                    text: "Which planet?",
                    type: .singleChoice,
                    options: ["Mars", "Venus", "Earth"],
                    answer: [1]
                ),
                QuestionInput(
                    text: "Which are moons?",
                    type: .multipleChoice,
                    options: ["Io", "Ceres", "Titan", "Vesta"],
                    answer: [1, 3]
                ),
                QuestionInput(text: "Why?", type: .shortAnswer),
            ]
        )
        _ = try registry.startPoll(by: host, pollID: poll.id)
        for (i, peer) in host.room.peersInJoinOrder.dropFirst().prefix(min(voters, 50)).enumerated() {
            _ = try registry.respond(
                peer,
                pollID: poll.id,
                [
                    ResponseInput(question: 1, option: 1 + i % 3),
                    ResponseInput(question: 2, options: [1, 3]),
                    ResponseInput(question: 3, text: "because"),
                ]
            )
        }
        return .pollStats(poll, maxUser: voters, withCorrect: true)
    }

    /// An HS256 app token of the shape `TokenMinter.appToken` signs (same
    /// claims, a fixed signature): the join case's input size is realistic.
    static let sampleToken: String = {
        func base64url(_ text: String) -> String { base64url(Array(text.utf8)) }
        func base64url(_ bytes: [UInt8]) -> String {
            Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let header = #"{"alg":"HS256","typ":"JWT"}"#
        let claims =
            #"{"exp":1763786400,"iat":1763700000,"jti":"3F2504E0-4F89-11D3-9A0C-0305E82C3301","#
            + #""nbf":1763699999,"role":"viewer","room_id":"fanout","type":"app","user_id":"viewer-123","version":2}"#
        let signature = (0..<32).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        return base64url(header) + "." + base64url(claims) + "." + base64url(signature)
    }()

    /// An `on-broadcast` as a chat sends it (WireGoldens' shape, a 72-character line).
    static let chatPush =
        #"{"jsonrpc":"2.0","method":"on-broadcast","params":{"message_id":"eb0354df4a45b34edf0f9924a3016430","#
        + #""timestamp":1763700003250,"sender":{"peer_id":"e6984080bab12a02953aeb70673e29cb","role":"host","#
        + #""info":{"name":"Ada L.","user_id":"ada"}},"recipient":{"type":"broadcast"},"#
        + #""info":{"message":"Welcome back everyone! Tonight's guest joins us in five minutes, stay tuned.","#
        + #""type":"chat"}}}"#

    /// An `on-reactions` of a show's tick: four counts, one of them the viewer's own.
    static let reactionsPush =
        #"{"jsonrpc":"2.0","method":"on-reactions","params":{"counts":[{"target":"stream","type":"clap","total":1284},"#
        + #"{"target":"stream","type":"love","total":907,"mine":3},{"target":"stream","type":"fire","total":355},"#
        + #"{"target":"eb0354df4a45b34edf0f9924a3016430","type":"laugh","total":48}]}}"#

    /// An `on-questions` of a tick in a busy Q&A: four questions changed (WireGoldens' shape).
    static let questionsPush: String = {
        let texts = [
            "When is the break? I joined late and want to catch the second half.",
            "Will the guest talk about the new album or only about the tour?",
            "Can you share the link to the charity stream from last week, please?",
            "How do I get on stage? I raised my hand twice but nothing happened.",
        ]
        let changed = texts.enumerated().map { index, text in
            #"{"question_id":"e70cd6df5d49ce30f5d81f333a1fb9e\#(index)","text":"\#(text)","asked_by":"#
                + #"{"peer_id":"77cbc4a133c2d0f653fcd6513d02bef\#(index)","role":"viewer","#
                + #""info":{"name":"viewer \#(index + 17)","user_id":"u\#(index + 17)"}},"asked_at":17637000\#(index)1000,"#
                + #""up":\#(12 + index * 7),"down":\#(index),"score":\#(12 + index * 6),"state":"open","pinned":false}"#
        }
        return #"{"jsonrpc":"2.0","method":"on-questions","params":{"changed":["# + changed.joined(separator: ",")
            + #"],"removed":[]}}"#
    }()

    /// MessageDeflater's work for one push of `frame`.
    static func deflateCase(_ name: String, _ what: String, _ frame: Frame) -> MicroCase {
        let payload = frame.textPayload
        let deflater = MessageDeflater()!
        let deflated = deflater.frame(of: payload, plainCount: frame.count)?.count ?? frame.count
        return MicroCase(name: name, what: "MessageDeflater: " + what, bytes: frame.count, deflatedBytes: deflated) {
            microSink &+= deflater.frame(of: payload, plainCount: frame.count)?.count ?? 0
        }
    }

    /// A text frame of `text`, as the encoder leaves it (header room in front).
    static func textFrame(_ text: String) -> Frame {
        Frame(reservedPayload: [UInt8](repeating: 0, count: Frame.headerRoom) + Array(text.utf8))
    }

    func benchCase(_ name: String) -> MicroCase {
        switch name {
        case "decode-broadcast":
            let input = broadcastCall
            return MicroCase(
                name: name,
                what: "JSON.parse of a `broadcast` call (100-byte message)",
                bytes: input.count
            ) {
                if let members = try? JSON.parse(input).objectValue { microSink &+= members.count }
            }
        case "decode-join":
            let input = joinCall
            return MicroCase(name: name, what: "JSON.parse of a `join` call (HS256 app token)", bytes: input.count) {
                if let members = try? JSON.parse(input).objectValue { microSink &+= members.count }
            }
        case "encode-broadcast":
            let push = delivery!.push
            return MicroCase(
                name: name,
                what: "Envelope.push(.broadcast) → Frame (`on-broadcast`)",
                bytes: frame!.count
            ) {
                microSink &+= Envelope.push(push, policyChanges: [:]).count
            }
        case "encode-peer-join":
            let push = peerJoin!
            return MicroCase(
                name: name,
                what: "Envelope.push(.peerJoin) → Frame (`on-peer-join`, a peer with 2 tracks)",
                bytes: Envelope.push(push, policyChanges: [:]).count
            ) {
                microSink &+= Envelope.push(push, policyChanges: [:]).count
            }
        case "encode-poll-stats":
            let push = pollStats!
            return MicroCase(
                name: name,
                what: "Envelope.push(.pollStats) → Frame (`on-poll-stats`, a 3-question quiz)",
                bytes: Envelope.push(push, policyChanges: [:]).count
            ) {
                microSink &+= Envelope.push(push, policyChanges: [:]).count
            }
        case "fanout-enqueue":
            let frame = self.frame!
            let connections = self.connections
            return MicroCase(
                name: name,
                what: "Connection.enqueue of one shared Frame × \(Fmt.int(connections.count))",
                bytes: frame.count,
                recipients: connections.count
            ) {
                for connection in connections where !connection.enqueue(frame) { microSink &+= 1 }
                for connection in connections { connection.discardQueuedForBenchmark() }
            }
        case "word-filter":
            // Section 22's bound: a 4 KiB message against 1,000 blocked words,
            // none of them in it (the whole text is scanned).
            let filter = WordFilter((0..<1000).map { "blocked\($0)word" })
            var text = ""
            while text.utf8.count < 4096 - 12 { text += "the show is live tonight, join us! " }
            let message = String(text.prefix(4096))
            return MicroCase(
                name: name,
                what: "WordFilter.matches: a 4 KiB message against 1,000 blocked words (no match: a full scan)",
                bytes: message.utf8.count
            ) {
                if filter.matches(message) { microSink &+= 1 }
            }
        case "fanout-dispatch":
            let dispatcher = server!.dispatcher
            let deliveries = [delivery!]
            let connections = self.connections
            return MicroCase(
                name: name,
                what: "Dispatcher.fanOut of one `broadcast` delivery to \(Fmt.int(connections.count)) peers"
                    + " (encode once + every enqueue)",
                bytes: frame!.count,
                recipients: connections.count
            ) {
                dispatcher.fanOut(deliveries)
                for connection in connections { connection.discardQueuedForBenchmark() }
            }
        case "deflate-broadcast":
            // permessage-deflate: once per push, whatever its recipients (Transport/Deflate.swift).
            return Self.deflateCase(
                name,
                "the `on-broadcast` of encode-broadcast compressed (once per push)",
                self.frame!
            )
        case "deflate-chat":
            return Self.deflateCase(
                name,
                "an `on-broadcast` with a 72-character chat line compressed (once per push)",
                Self.textFrame(Self.chatPush)
            )
        case "deflate-reactions":
            return Self.deflateCase(
                name,
                "an `on-reactions` with 4 counts compressed (once per tick)",
                Self.textFrame(Self.reactionsPush)
            )
        case "deflate-questions":
            return Self.deflateCase(
                name,
                "an `on-questions` with 4 changed questions compressed (once per tick)",
                Self.textFrame(Self.questionsPush)
            )
        default:
            preconditionFailure("unknown case \(name)")
        }
    }
}
