import Testing

@testable import RoomServer

/// A connection's queue of frames (Transport/FrameQueue.swift): unmanaged
/// references, and all the queues holding a frame share one strong
/// reference. What the write path and the memory depend on.
@Suite struct FrameQueueTests {
    static func byte(of frame: Unmanaged<Frame>) -> UInt8 {
        var bytes: [UInt8] = []
        frame._withUnsafeGuaranteedRef { $0.append(to: &bytes) }
        return bytes[0]
    }

    @Test func framesLeaveInTheOrderQueuedWhileTheQueueGrowsAndDrains() {
        var queue = FrameQueue()
        let frames = (0..<200).map { Frame(wire: [UInt8($0)]) }
        var next = 0
        var left: [UInt8] = []
        for _ in 0..<20 {  // 10 in, 5 out: the queue grows and compacts while it holds frames
            for _ in 0..<10 {
                queue.append(frames[next])
                next += 1
            }
            for _ in 0..<5 {
                left.append(Self.byte(of: queue.first))
                queue.removeFirst()
            }
        }
        #expect(queue.count == 100)
        while !queue.isEmpty {
            left.append(Self.byte(of: queue.first))
            queue.removeFirst()
        }
        #expect(left == (0..<200).map { UInt8($0) })
    }

    /// The ring wraps: frames queued past its end, then more than it holds
    /// (it grows with the wrapped frames in order), then all but the oldest dropped.
    @Test func aWrappedQueueGrowsAndDropsInOrder() {
        var queue = FrameQueue()
        let frames = (0..<40).map { Frame(wire: [UInt8($0)]) }
        for index in 0..<8 { queue.append(frames[index]) }  // 8 slots, full
        for _ in 0..<6 { queue.removeFirst() }  // head at 6
        for index in 8..<14 { queue.append(frames[index]) }  // wraps: 6, 7 at the end, 8…13 from 0
        for index in 14..<20 { queue.append(frames[index]) }  // grows to 16 slots
        let count = queue.count
        #expect(count == 14)
        let queued = queue.queued
        #expect(queued.map { Self.byte(of: .passUnretained($0)) } == (6..<20).map { UInt8($0) })
        queue.removeFirst()
        queue.removeAll()
        let left = queue.count
        #expect(left == 0, "every frame let go")
        queue.append(frames[20])
        let next = Self.byte(of: queue.first)
        #expect(next == 20)
        queue.removeFirst()
        let empty = queue.isEmpty
        #expect(empty)
    }

    @Test func aFrameLivesUntilTheLastQueueHoldingItLetsGo() {
        weak var watched: Frame?
        var first = FrameQueue()
        var second = FrameQueue()
        do {
            let frame = Frame(wire: [7])
            watched = frame
            first.append(frame)
            second.append(frame)
            second.append(Frame(wire: [8]))
        }
        #expect(watched?.queuedOn == 2, "queued twice, not freed")
        first.removeFirst()
        #expect(watched != nil, "the second queue still holds it")
        second.removeAll()
        let drained = second.isEmpty
        #expect(drained)
        #expect(watched == nil, "freed with the last queue's reference")
        do {
            var dropped = FrameQueue()
            let frame = Frame(wire: [9])
            watched = frame
            dropped.append(frame)
        }
        #expect(watched == nil, "a queue that goes away lets go of its frames")
        var pings = FrameQueue()
        pings.append(Frame.ping)
        pings.removeFirst()
        #expect(Frame.ping.queuedOn == 0, "the shared ping is never counted")
    }
}
