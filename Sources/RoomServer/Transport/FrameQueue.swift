/// The frames queued on one connection, oldest first, as unmanaged
/// references. A frame pushed to N peers sits in N queues; they share one
/// strong reference, counted in `Frame.queuedOn` without atomics (the
/// service thread owns the frame and every queue it is in): the first queue
/// retains it, the last one to let go releases it. An array of `Frame` did
/// an atomic retain and release per delivery, and two more to read the
/// head: reference counting was a quarter of roomd's samples in the fan-out
/// profile (docs/BENCHMARKS.md, levers). Its connection's service thread
/// only: debug builds check that the thread that queues or lets go of a
/// frame is the one whose queues hold it (`Frame.queuedBy`). Its own ring
/// of raw slots, not RoomCollections' `FIFO`: on a `FIFO` the fan-out
/// lost its knee (scripts/bench/levers.md).
struct FrameQueue: ~Copyable {
    /// A ring of `capacity` slots (a power of two, or 0 and no storage), the
    /// oldest frame at `head`. Raw storage: no uniqueness check or bounds
    /// check per append, and nothing shifts when a long queue drains.
    private var slots: UnsafeMutablePointer<Unmanaged<Frame>>?
    private var capacity = 0
    private var head = 0
    /// Frames queued.
    private(set) var count = 0

    /// A queue emptied with more slots than this gives its storage back (an idle connection holds none).
    private static let keptCapacity = 64

    var isEmpty: Bool { count == 0 }

    mutating func append(_ frame: Frame) {
        if !frame.isImmortal {
            #if DEBUG
            if frame.queuedOn == 0 { frame.queuedBy = ServiceThread.currentID }
            Self.assertQueuedHere(frame)
            #endif
            if frame.queuedOn == 0 { _ = Unmanaged.passRetained(frame) }
            frame.queuedOn += 1
        }
        if count == capacity { grow() }
        slots.unsafelyUnwrapped[(head &+ count) & (capacity &- 1)] = .passUnretained(frame)
        count &+= 1
    }

    /// The oldest frame, borrowed: valid until `removeFirst()`.
    var first: Unmanaged<Frame> {
        precondition(count > 0, "first of an empty FrameQueue")
        return slots.unsafelyUnwrapped[head]
    }

    /// The queued frames, oldest first (for harnesses that check them).
    var queued: [Frame] {
        (0..<count).map { slots.unsafelyUnwrapped[(head + $0) & (capacity - 1)].takeUnretainedValue() }
    }

    /// Lets go of the oldest frame.
    mutating func removeFirst() {
        precondition(count > 0, "removeFirst of an empty FrameQueue")
        Self.letGo(slots.unsafelyUnwrapped[head])
        head = (head &+ 1) & (capacity &- 1)
        count &-= 1
        if count == 0 {
            head = 0
            if capacity > Self.keptCapacity { release() }
        }
    }

    /// Lets go of every frame. (No frame is ever partly written by roomd, so
    /// none needs to stay: `Connection.writeQueued` writes whole frames.)
    mutating func removeAll() {
        guard count > 0 else { return }
        for offset in 0..<count { Self.letGo(slots.unsafelyUnwrapped[(head + offset) & (capacity - 1)]) }
        head = 0
        count = 0
        if capacity > Self.keptCapacity { release() }
    }

    deinit {
        for offset in 0..<count { Self.letGo(slots.unsafelyUnwrapped[(head + offset) & (capacity - 1)]) }
        slots?.deallocate()
    }

    /// Twice the slots (8 at first), the frames moved to the front in order.
    private mutating func grow() {
        let larger = max(8, capacity * 2)
        let moved = UnsafeMutablePointer<Unmanaged<Frame>>.allocate(capacity: larger)
        if let slots {
            let tail = min(count, capacity - head)  // from head to the end of the ring, then from 0
            moved.initialize(from: slots + head, count: tail)
            (moved + tail).initialize(from: slots, count: count - tail)
            slots.deallocate()
        }
        slots = moved
        capacity = larger
        head = 0
    }

    private mutating func release() {
        slots?.deallocate()
        slots = nil
        capacity = 0
        head = 0
    }

    private static func letGo(_ frame: Unmanaged<Frame>) {
        let last = frame._withUnsafeGuaranteedRef { frame -> Bool in
            if frame.isImmortal { return false }
            #if DEBUG
            Self.assertQueuedHere(frame)
            #endif
            frame.queuedOn -= 1
            return frame.queuedOn == 0
        }
        if last { frame.release() }
    }

    #if DEBUG
    /// `queuedOn` is not atomic: only the thread whose queues hold the frame may count it.
    private static func assertQueuedHere(_ frame: Frame) {
        precondition(frame.queuedBy == ServiceThread.currentID, "a frame queued on two threads (Frame.queuedOn)")
    }
    #endif
}
