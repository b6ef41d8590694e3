import RoomCollections
import RoomModel
import Synchronization

/// The waiting webhooks, shared by the service thread (which only appends,
/// never waits for the network) and the sender task. Bounded: when full the
/// oldest waiting event is dropped and counted. Per-room order: an event is
/// handed out only while no earlier event of its room is in flight, so a
/// failing event holds back its room's later events and nobody else's.
final class WebhookQueue: Sendable {
    struct State {
        var waiting = FIFO<WebhookEvent>()
        /// Rooms with an event in flight (being sent or waiting for a retry).
        var busyRooms: Set<RoomID> = []
        var dropped = 0
        var count: Int { waiting.count }
    }

    let limit: Int
    /// Rooms whose events are sent at the same time, at most.
    let maxInFlight: Int
    private let state = Mutex(State())

    /// Rooms whose events are delivered at once, by default.
    static let defaultMaxInFlight = 16

    init(limit: Int, maxInFlight: Int = defaultMaxInFlight) {
        self.limit = limit
        self.maxInFlight = maxInFlight
    }

    /// Appends `event`; when that pushed the oldest waiting event out,
    /// returns how many were dropped so far (else nil).
    func append(_ event: WebhookEvent) -> Int? {
        state.withLock { s in
            var dropped: Int?
            if s.count >= limit, !s.waiting.isEmpty {
                s.waiting.removeFirst()
                s.dropped += 1
                dropped = s.dropped
            }
            s.waiting.append(event)
            return dropped
        }
    }

    /// The oldest waiting event whose room has nothing in flight, marking
    /// the room busy; nil when none may go now.
    func takeReady() -> WebhookEvent? {
        state.withLock { s in
            guard s.busyRooms.count < maxInFlight else { return nil }
            var index = 0
            while index < s.waiting.count, s.busyRooms.contains(s.waiting[index].roomID) { index += 1 }
            guard index < s.waiting.count else { return nil }
            let event = s.waiting.remove(at: index)
            s.busyRooms.insert(event.roomID)
            return event
        }
    }

    /// The event of `roomID` in flight is done (delivered or given up).
    func finished(_ roomID: RoomID) {
        _ = state.withLock { $0.busyRooms.remove(roomID) }
    }

    /// Nothing waiting and nothing in flight.
    var isIdle: Bool { state.withLock { $0.count == 0 && $0.busyRooms.isEmpty } }
}
