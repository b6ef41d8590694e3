/// The frames queued on one connection, oldest first, as unmanaged
/// references. A frame pushed to N peers sits in N queues; they share one
/// strong reference, counted in `Frame.queuedOn` without atomics (the
/// service thread owns the frame and every queue it is in): the first queue
/// retains it, the last one to let go releases it. An array of `Frame` did
/// an atomic retain and release per delivery, and two more to read the
/// head: reference counting was a quarter of roomd's samples in the fan-out
/// profile (docs/BENCHMARKS.md, levers). Its connection's service thread
/// only: debug builds check that the thread that queues or lets go of a
/// frame is the one whose queues hold it (`Frame.queuedBy`). Its own array
/// and head index, not RoomCollections' `FIFO`: on a `FIFO` the fan-out
/// lost its knee (scripts/bench/levers.md).
struct FrameQueue: ~Copyable {
    private var frames: [Unmanaged<Frame>] = []
    /// Index of the oldest frame still queued.
    private var head = 0

    var isEmpty: Bool { head == frames.count }

    mutating func append(_ frame: Frame) {
        if !frame.isImmortal {
            #if DEBUG
            if frame.queuedOn == 0 { frame.queuedBy = ServiceThread.currentID }
            Self.assertQueuedHere(frame)
            #endif
            if frame.queuedOn == 0 { _ = Unmanaged.passRetained(frame) }
            frame.queuedOn += 1
        }
        frames.append(.passUnretained(frame))
    }

    /// The oldest frame, borrowed: valid until `removeFirst()`.
    var first: Unmanaged<Frame> { frames[head] }

    /// Frames queued.
    var count: Int { frames.count - head }

    /// The queued frames, oldest first (for harnesses that check them).
    var queued: [Frame] { frames[head...].map { $0.takeUnretainedValue() } }

    /// Lets go of the oldest frame.
    mutating func removeFirst() {
        Self.letGo(frames[head])
        head += 1
        if head == frames.count {
            frames.removeAll(keepingCapacity: frames.count <= 64)
            head = 0
        } else if head > 1024 {
            frames.removeFirst(head)
            head = 0
        }
    }

    /// Lets go of every frame but the oldest when `keepingFirst`, else all.
    mutating func removeAll(keepingFirst: Bool) {
        let from = keepingFirst && !isEmpty ? head + 1 : head
        for index in from..<frames.count { Self.letGo(frames[index]) }
        if from > head {
            frames = [frames[head]]
        } else {
            frames.removeAll(keepingCapacity: true)
        }
        head = 0
    }

    deinit {
        for index in head..<frames.count { Self.letGo(frames[index]) }
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
