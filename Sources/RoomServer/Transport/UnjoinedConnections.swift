import RoomCollections

/// One client connection that has not joined yet: where it came from, and
/// whose socket it is — roomd's while its request head is being read
/// (RequestHeads.swift), then libwebsockets'.
final class Arrival {
    enum Socket {
        /// roomd reads the request head (the libev loop).
        case head(Int32)
        /// libwebsockets serves it.
        case lws(OpaquePointer)
        /// Being handed to libwebsockets (its wsi comes with LWS_CALLBACK_WSI_CREATE).
        case adopting
    }

    let address: PeerAddress
    var socket: Socket
    /// No longer unjoined: joined, its HTTP request complete, or closed.
    fileprivate(set) var settled = false
    /// A WebSocket whose upgrade is done, waiting for its `join` (within the
    /// join deadline); its `idleSince` is then its upgrade's time.
    fileprivate(set) var upgraded = false
    /// When it last made progress (monotonic ms): its arrival (or, for a kept
    /// HTTP connection, its last answer), then its upgrade.
    fileprivate(set) var idleSince: Int64

    init(address: PeerAddress, socket: Socket, at now: Int64) {
        self.address = address
        self.socket = socket
        self.idleSince = now
    }
}

/// The connections that have not joined yet — a WebSocket before its `join`,
/// an HTTP connection before its request is complete or kept alive waiting
/// for its next one — by the address they came from: what the per-address cap
/// counts while the socket budget is short, and which connection goes first
/// (PROTOCOL.md section 1, "Unjoined connections"). Within an address the
/// longest idle goes first: the one whose last progress (arrival, last HTTP
/// answer, or upgrade) is the oldest — so a client that makes progress
/// behind the same address (one NAT) as one holding idle sockets is the last
/// of that address to go, even while the other keeps reconnecting. Joined
/// peers are never here.
/// Its service thread's only (checked in debug builds).
final class UnjoinedConnections {
    /// One address's unjoined connections (settled or upgraded ones are
    /// dropped from `waiting` when they reach its front, settled ones from
    /// `upgraded`).
    private final class Line {
        /// Not upgraded: being read, sent nothing yet, or a kept HTTP connection; by arrival.
        var waiting = FIFO<Arrival>()
        /// Upgraded WebSockets waiting for their join, by upgrade.
        var upgraded = FIFO<Arrival>()
        var live = 0

        /// The connection that has been idle longest, if any: the front of
        /// `waiting` or of `upgraded` (each ordered by `idleSince`), whichever
        /// made its last progress earlier. A connection that has just arrived
        /// goes after every one of its address that sits idle.
        func longestIdle() -> Arrival? {
            waiting.removeFirst(while: { $0.settled || $0.upgraded })
            upgraded.removeFirst(while: { $0.settled })
            guard let first = waiting.first else { return upgraded.first }
            guard let upgradedFirst = upgraded.first else { return first }
            return upgradedFirst.idleSince < first.idleSince ? upgradedFirst : first
        }
    }

    private var lines: [PeerAddress: Line] = [:]
    /// Addresses by how many unjoined connections each holds, and the most any holds.
    private var addressesHolding: [Int: Set<PeerAddress>] = [:]
    private var most = 0
    private var byWSI: [OpaquePointer: Arrival] = [:]
    /// Unjoined connections, all addresses.
    private(set) var count = 0
    private let thread: ServiceThread

    init(thread: ServiceThread) { self.thread = thread }

    /// Unjoined connections from `address`.
    func count(from address: PeerAddress) -> Int { lines[address]?.live ?? 0 }

    /// A new connection from `address` (or a kept HTTP connection waiting again).
    @discardableResult
    func arrived(from address: PeerAddress, socket: Arrival.Socket, at now: Int64) -> Arrival {
        thread.assertIsCurrent()
        let arrival = Arrival(address: address, socket: socket, at: now)
        let line = lines[address] ?? Line()
        lines[address] = line
        line.waiting.removeFirst(while: { $0.settled || $0.upgraded })
        line.waiting.append(arrival)
        line.live += 1
        moved(address, from: line.live - 1, to: line.live)
        count += 1
        if case .lws(let wsi) = socket { byWSI[wsi] = arrival }
        return arrival
    }

    /// libwebsockets took the connection over as `wsi`.
    func adopted(_ arrival: Arrival, as wsi: OpaquePointer) {
        thread.assertIsCurrent()
        arrival.socket = .lws(wsi)
        if !arrival.settled { byWSI[wsi] = arrival }
    }

    /// The WebSocket `wsi` is upgraded: it waits for its join behind its address's idle connections.
    func upgraded(wsi: OpaquePointer, at now: Int64) {
        thread.assertIsCurrent()
        guard let arrival = byWSI[wsi], !arrival.settled, !arrival.upgraded, let line = lines[arrival.address] else {
            return
        }
        arrival.upgraded = true
        arrival.idleSince = now
        line.upgraded.removeFirst(while: { $0.settled })
        line.upgraded.append(arrival)
    }

    subscript(wsi: OpaquePointer) -> Arrival? { byWSI[wsi] }

    /// A kept HTTP connection that roomd answered itself (RequestHeads.swift)
    /// made progress: it goes to the back of its address's line, as if it
    /// arrived `now`, as the one returned; its address's count is unchanged.
    /// (The entry it leaves is dropped when it reaches the front.)
    func progressed(_ arrival: Arrival, at now: Int64) -> Arrival {
        thread.assertIsCurrent()
        guard !arrival.settled, !arrival.upgraded, let line = lines[arrival.address] else { return arrival }
        arrival.settled = true
        let fresh = Arrival(address: arrival.address, socket: arrival.socket, at: now)
        line.waiting.removeFirst(while: { $0.settled || $0.upgraded })
        line.waiting.append(fresh)
        return fresh
    }

    /// The connection is no longer unjoined (joined, its request complete, or closed).
    func settle(_ arrival: Arrival) {
        thread.assertIsCurrent()
        guard !arrival.settled else { return }
        arrival.settled = true
        if case .lws(let wsi) = arrival.socket { byWSI.removeValue(forKey: wsi) }
        count -= 1
        guard let line = lines[arrival.address] else { return }
        line.live -= 1
        moved(arrival.address, from: line.live + 1, to: line.live)
        if line.live == 0 {
            lines.removeValue(forKey: arrival.address)
        } else {
            line.waiting.removeFirst(while: { $0.settled || $0.upgraded })
            line.upgraded.removeFirst(while: { $0.settled })
        }
    }

    func settle(wsi: OpaquePointer) {
        if let arrival = byWSI[wsi] { settle(arrival) }
    }

    /// The longest-idle unjoined connection of `address` (see the type's comment).
    func longestIdle(of address: PeerAddress) -> Arrival? {
        thread.assertIsCurrent()
        return lines[address]?.longestIdle()
    }

    /// The longest-idle unjoined connection of the address that holds the most.
    func victim() -> Arrival? {
        thread.assertIsCurrent()
        guard most > 0, let address = addressesHolding[most]?.first else { return nil }
        return lines[address]?.longestIdle()
    }

    private func moved(_ address: PeerAddress, from old: Int, to new: Int) {
        if old > 0 {
            addressesHolding[old]?.remove(address)
            if addressesHolding[old]?.isEmpty == true { addressesHolding[old] = nil }
        }
        if new > 0 { addressesHolding[new, default: []].insert(address) }
        most = max(most, new)
        while most > 0, addressesHolding[most] == nil { most -= 1 }
    }
}
