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

    init(address: PeerAddress, socket: Socket) {
        self.address = address
        self.socket = socket
    }
}

/// The connections that have not joined yet — a WebSocket before its `join`,
/// an HTTP connection before its request is complete — by the address they
/// came from, oldest first: what the per-address cap counts, and which
/// connection goes when the socket budget is full (the oldest of the address
/// that holds the most). Joined peers are never here. Its service thread's
/// only (checked in debug builds).
final class UnjoinedConnections {
    /// One address's unjoined connections, oldest first (settled ones are
    /// dropped when they reach the front).
    private final class Line {
        var arrivals = FIFO<Arrival>()
        var live = 0
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

    /// A new connection from `address`.
    @discardableResult
    func arrived(from address: PeerAddress, socket: Arrival.Socket) -> Arrival {
        thread.assertIsCurrent()
        let arrival = Arrival(address: address, socket: socket)
        let line = lines[address] ?? Line()
        lines[address] = line
        line.arrivals.removeFirst { $0.settled }
        line.arrivals.append(arrival)
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

    subscript(wsi: OpaquePointer) -> Arrival? { byWSI[wsi] }

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
            line.arrivals.removeFirst { $0.settled }
        }
    }

    func settle(wsi: OpaquePointer) {
        if let arrival = byWSI[wsi] { settle(arrival) }
    }

    /// The oldest unjoined connection of the address that holds the most.
    func victim() -> Arrival? {
        thread.assertIsCurrent()
        guard most > 0, let address = addressesHolding[most]?.first, let line = lines[address] else { return nil }
        line.arrivals.removeFirst { $0.settled }
        return line.arrivals.first
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
