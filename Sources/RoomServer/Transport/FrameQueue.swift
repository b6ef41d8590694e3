/// The frames queued on one connection, oldest first, as unmanaged
/// references. A frame pushed to N peers sits in N queues; they share one
/// strong reference, counted in `Frame.queuedOn` without atomics (the
/// service thread owns the frame and every queue it is in): the first queue
/// retains it, the last one to let go releases it. An array of `Frame` did
/// an atomic retain and release per delivery, and two more to read the
/// head: reference counting was a quarter of roomd's samples in the fan-out
/// profile (docs/BENCHMARKS.md, levers). Service thread only, like the
/// connection that owns it.
///
/// A ring of its own rather than an array: `Array.append` checked the
/// buffer's uniqueness on every push (3.5 % of roomd's samples at the knee).
struct FrameQueue: ~Copyable {
    private var slots: UnsafeMutablePointer<Unmanaged<Frame>>?
    private var capacity = 0
    /// Position of the oldest frame, and frames queued.
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ frame: Frame) {
        if !frame.isImmortal {
            if frame.queuedOn == 0 { _ = Unmanaged.passRetained(frame) }
            frame.queuedOn += 1
        }
        if count == capacity { grow() }
        slots![(head + count) & (capacity - 1)] = .passUnretained(frame)
        count += 1
    }

    /// The oldest frame, borrowed: valid until `removeFirst()`.
    var first: Unmanaged<Frame> { slots![head] }

    /// Lets go of the oldest frame.
    mutating func removeFirst() {
        Self.letGo(slots![head])
        head = (head + 1) & (capacity - 1)
        count -= 1
        if count == 0 { emptied() }
    }

    /// Lets go of every frame but the oldest when `keepingFirst`, else all.
    mutating func removeAll(keepingFirst: Bool) {
        let keep = keepingFirst && count > 0 ? 1 : 0
        for index in keep..<count { Self.letGo(slots![(head + index) & (capacity - 1)]) }
        count = keep
        if count == 0 { emptied() }
    }

    /// A ring that grew past 64 frames is given back once empty (a burst
    /// must not cost an idle connection memory for good).
    private mutating func emptied() {
        head = 0
        if capacity > 64 {
            slots?.deallocate()
            slots = nil
            capacity = 0
        }
    }

    deinit {
        for index in 0..<count { Self.letGo(slots![(head + index) & (capacity - 1)]) }
        slots?.deallocate()
    }

    /// Doubles the ring (a power of two, from 16), oldest frame first.
    private mutating func grow() {
        let bigger = max(16, capacity * 2)
        let new = UnsafeMutablePointer<Unmanaged<Frame>>.allocate(capacity: bigger)
        for index in 0..<count { new[index] = slots![(head + index) & (capacity - 1)] }
        slots?.deallocate()
        slots = new
        capacity = bigger
        head = 0
    }

    private static func letGo(_ frame: Unmanaged<Frame>) {
        let last = frame._withUnsafeGuaranteedRef { frame -> Bool in
            if frame.isImmortal { return false }
            frame.queuedOn -= 1
            return frame.queuedOn == 0
        }
        if last { frame.release() }
    }
}
