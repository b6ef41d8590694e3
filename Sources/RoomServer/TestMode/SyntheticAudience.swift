import Logging
import Metrics
import RoomModel
import RoomWire

/// Where a synthetic peer's frames go: counted, then dropped, as a socket
/// that reads everything would take them. The same object for every
/// synthetic peer of a daemon. Its service thread's only.
final class AudienceSink {
    private let pushes: Metrics.Counter

    init(pushes: Metrics.Counter) { self.pushes = pushes }

    func took(_ frame: Frame) { pushes.increment() }
}

/// Test mode II's synthetic audience (PROTOCOL.md section 33): socketless
/// peers that are real peers of their room — joined through the model as a
/// token's join would be (counted, searchable, announced), each on a
/// `Connection` whose sink counts and drops each frame as it is handed over,
/// so every push to them is decided and encoded as for a client (the
/// socket's queue and writes are not exercised) — and that call methods on
/// command, through the dispatcher's own checks and handlers. Who acts is
/// drawn from a splitmix64 stream per room (the request's `seed`, else
/// `--seed`, else 0): the same calls give the same choices on every run.
/// Its service thread's only.
final class SyntheticAudience {
    /// At most this many peers per `POST /v2/test/audience` (section 33).
    static let maxCount = 100_000
    /// At most this many synthetic peers on the daemon at once.
    static let maxPeers = 200_000
    /// The actions `act` takes (section 33).
    static let actions: Set<String> = [
        "react", "broadcast", "question-add", "question-vote", "poll-response", "stage-request", "group-join",
        "leave",
    ]
    /// At most this many peer ids in an answer.
    static let listedIDs = 1000

    /// One room's synthetic peers: their connections (joined), the next
    /// number of a user id, and the stream that chooses who acts.
    private struct Crowd {
        var members: [Connection] = []
        var nextNumber = 1
        var stream: SplitMix64
    }

    private var crowds: [RoomID: Crowd] = [:]
    private var total = 0
    private let sink: AudienceSink
    private let thread: ServiceThread
    private let registry: RoomRegistry
    private let dispatcher: Dispatcher
    private let sockets: Sockets
    private let homes: RoomHomes
    private let clock: RoomClock
    private let defaultSeed: UInt64
    private let logger: Logger

    init(
        thread: ServiceThread,
        registry: RoomRegistry,
        dispatcher: Dispatcher,
        sockets: Sockets,
        homes: RoomHomes,
        clock: RoomClock,
        metrics: ServerMetrics,
        seed: UInt64,
        logger: Logger
    ) {
        self.thread = thread
        self.registry = registry
        self.dispatcher = dispatcher
        self.sockets = sockets
        self.homes = homes
        self.clock = clock
        self.defaultSeed = seed
        self.logger = logger
        sink = AudienceSink(pushes: metrics.testAudiencePushes)
    }

    /// `POST /v2/test/audience`: `count` peers of `role` join `room` (made
    /// as a first join would make it). Stops at the first join refused
    /// after some joined (a full room): the answer counts those that did.
    func add(
        room roomID: RoomID,
        count: Int,
        role: String,
        seed: UInt64?,
        namePrefix: String
    ) throws(RoomError) -> (ids: [PeerID], count: Int) {
        thread.assertIsCurrent()
        forgetLeft(roomID)
        guard total + count <= Self.maxPeers else {
            throw RoomError(.tooMany, "count: at most \(Self.maxPeers) synthetic peers on a daemon (\(total) now)")
        }
        // A cluster's synthetic audience lives on the room's home (its peers have no node of their own).
        guard homes.serves(roomID) else {
            throw RoomError(
                .wrongState,
                "room_id: \(roomID) is not served by this node: post to its home node (where its peers joined)"
            )
        }
        try homes.admitJoin(roomID)
        var crowd = crowds[roomID] ?? Crowd(stream: SplitMix64(seed: seed ?? defaultSeed))
        if let seed, crowd.members.isEmpty { crowd.stream = SplitMix64(seed: seed) }
        var ids: [PeerID] = []
        var failure: RoomError?
        for _ in 0..<count {
            let userID = UserID("\(namePrefix)\(crowd.nextNumber)")
            let connection = Connection(
                sink: .audience(sink),
                id: sockets.makeID(),
                maxQueuedBytes: Int.max,
                rate: TokenBucket(
                    rate: registry.settings.limits.messagesPerSecond,
                    burst: registry.settings.limits.messageBurst,
                    nowMillis: clock.nowMillis()
                ),
                now: monotonicMillis()
            )
            let outcome: JoinOutcome
            do throws(RoomError) {
                outcome = try registry.join(
                    JoinRequest(
                        roomID: roomID,
                        requestedRoomID: nil,
                        userID: userID,
                        roleName: role,
                        name: userID.rawValue,
                        nameIsParam: false,
                        avatar: nil,
                        attributes: [:],
                        data: "",
                        viewOnly: false,
                        resumePeerID: nil,
                        tokenExpiresAt: nil,
                        tokenExpired: false
                    )
                )
            } catch {
                failure = error
                break
            }
            crowd.nextNumber += 1
            outcome.peer.endpoint = connection
            connection.peer = outcome.peer
            connection.markJoined()
            crowd.members.append(connection)
            if ids.count < Self.listedIDs { ids.append(outcome.peer.id) }
            dispatcher.fanOut(outcome.deliveries)
        }
        let joined = crowd.members.count - (crowds[roomID]?.members.count ?? 0)
        total += joined
        if !crowd.members.isEmpty { crowds[roomID] = crowd }
        homes.touch(roomID)
        if let failure, joined == 0 { throw failure }
        logger.info(
            "test audience joined",
            metadata: [
                "room": "\(roomID)", "count": "\(joined)", "role": "\(role)",
                "stopped": "\(failure.map { "\($0.code.rawValue)" } ?? "no")",
            ]
        )
        return (ids, joined)
    }

    /// `POST /v2/test/audience/act`: `count` of the room's synthetic peers,
    /// drawn from its stream, call `action` with `params` now → how many
    /// succeeded, each error code met with its count, and the first
    /// message of each code (a harness sees why).
    func act(
        room roomID: RoomID,
        action: String,
        count: Int,
        params: JSON
    ) throws(RoomError) -> (done: Int, errors: [Int: Int], messages: [Int: String]) {
        thread.assertIsCurrent()
        forgetLeft(roomID)
        guard var crowd = crowds[roomID], !crowd.members.isEmpty else {
            throw RoomError(.roomNotFound, "room_id: no synthetic audience in \(roomID)")
        }
        guard count <= crowd.members.count else {
            throw .invalidParams("count: the audience of \(roomID) has \(crowd.members.count) peers, got \(count)")
        }
        // A partial Fisher–Yates shuffle in place: O(count), and the same
        // choices for the same stream and the same calls.
        for index in 0..<count {
            let left = UInt64(crowd.members.count - index)
            let pick = index + Int(crowd.stream.next() % left)
            crowd.members.swapAt(index, pick)
        }
        let chosen = Array(crowd.members.prefix(count))
        crowds[roomID] = crowd
        var done = 0
        var errors: [Int: Int] = [:]
        var messages: [Int: String] = [:]
        for connection in chosen where connection.peer != nil {
            if let error = dispatcher.callAsAudience(action, params: params, on: connection) {
                errors[error.code.rawValue, default: 0] += 1
                if messages[error.code.rawValue] == nil { messages[error.code.rawValue] = error.message }
            } else {
                done += 1
            }
        }
        forgetLeft(roomID)
        logger.info(
            "test audience acted",
            metadata: ["room": "\(roomID)", "action": "\(action)", "done": "\(done)", "errors": "\(errors)"]
        )
        return (done, errors, messages)
    }

    /// `DELETE /v2/test/audience?room_id=`: every synthetic peer of the
    /// room leaves, as a `leave` does → how many.
    func remove(room roomID: RoomID) -> Int {
        thread.assertIsCurrent()
        forgetLeft(roomID)
        guard let crowd = crowds.removeValue(forKey: roomID) else { return 0 }
        total -= crowd.members.count
        var removed = 0
        for connection in crowd.members {
            guard let peer = connection.peer, !peer.hasLeft else { continue }
            connection.peer = nil
            peer.endpoint = nil
            removed += 1
            dispatcher.fanOut(registry.leave(peer, reason: .clientRequest))
        }
        homes.touch(roomID)
        logger.info("test audience left", metadata: ["room": "\(roomID)", "count": "\(removed)"])
        return removed
    }

    /// Drops the members that are no longer in the room (a `leave` they
    /// made, a removal, the room's end): O(members), test mode only.
    private func forgetLeft(_ roomID: RoomID) {
        guard var crowd = crowds[roomID] else { return }
        let before = crowd.members.count
        crowd.members.removeAll { connection in
            guard let peer = connection.peer, !peer.hasLeft, connection.closeCode == nil else {
                if let peer = connection.peer, !peer.hasLeft {
                    // Closed without leaving (a 4029 streak): as a lost socket with no grace.
                    connection.peer = nil
                    peer.endpoint = nil
                    dispatcher.fanOut(registry.leave(peer, reason: .websocketClosed))
                }
                return true
            }
            return false
        }
        total -= before - crowd.members.count
        if crowd.members.isEmpty { crowds[roomID] = nil } else { crowds[roomID] = crowd }
    }
}
