import RoomCollections
import Testing

/// The deadline queue (Sources/RoomCollections/DeadlineQueue.swift): an
/// indexed heap ordered by (at, rank, seq), with handles that go stale once
/// their entry left, and no lazy deletion — it holds the live entries only.
@Suite struct DeadlineQueueTests {
    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    /// Pops everything due at `now`, in order.
    static func drain(_ queue: inout DeadlineQueue<String>, now: Int64) -> [String] {
        var popped: [String] = []
        while let entry = queue.popDue(now: now) { popped.append(entry.payload) }
        return popped
    }

    @Test func entriesComeByTimeThenRankThenTheOrderTheyWereScheduled() {
        var queue = DeadlineQueue<String>()
        queue.schedule("c-late", at: 30)
        queue.schedule("b-rank1", at: 20, rank: 1)
        queue.schedule("a-rank0-first", at: 20)
        queue.schedule("b-rank1-second", at: 20, rank: 1)
        queue.schedule("a-rank0-second", at: 20)
        queue.schedule("early", at: 10, rank: 5)
        #expect(queue.count == 6 && queue.next == 10)
        #expect(Self.drain(&queue, now: 9).isEmpty, "nothing is due before its time")
        #expect(Self.drain(&queue, now: 10) == ["early"], "due at exactly its time")
        #expect(
            Self.drain(&queue, now: 25) == ["a-rank0-first", "a-rank0-second", "b-rank1", "b-rank1-second"]
        )
        #expect(queue.next == 30)
        #expect(Self.drain(&queue, now: .max) == ["c-late"])
        #expect(queue.isEmpty && queue.next == nil)
    }

    @Test func rescheduleMovesAnEntryEarlierOrLaterAndBehindItsEquals() {
        var queue = DeadlineQueue<String>()
        let a = queue.schedule("a", at: 10)
        queue.schedule("b", at: 20)
        let c = queue.schedule("c", at: 30)
        let movedC = queue.reschedule(c, at: 5)
        #expect(movedC)
        #expect(queue.next == 5 && queue.deadline(of: c) == 5)
        let movedA = queue.reschedule(a, at: 20)
        #expect(movedA, "later, to the time of b")
        #expect(Self.drain(&queue, now: 100) == ["c", "b", "a"], "a moved behind b, which was there first")
    }

    @Test func cancelRemovesAtOnceAndAStaleHandleDoesNothing() {
        var queue = DeadlineQueue<String>()
        let a = queue.schedule("a", at: 10)
        let b = queue.schedule("b", at: 20)
        #expect(queue.cancel(a) == "a")
        #expect(queue.count == 1 && queue.next == 20)
        #expect(queue.cancel(a) == nil, "cancelled twice: the second does nothing")
        let movedStale = queue.reschedule(a, at: 1)
        #expect(!movedStale, "a stale handle moves nothing")
        #expect(queue.deadline(of: a) == nil && queue.payload(of: a) == nil)
        let reused = queue.schedule("c", at: 30)  // takes a's slot, a newer generation
        #expect(reused != a)
        #expect(queue.cancel(a) == nil, "a's handle does not reach the slot's new entry")
        #expect(queue.deadline(of: reused) == 30)
        let popped = queue.popDue(now: 20)
        #expect(popped?.id == b && popped?.at == 20 && popped?.payload == "b")
        #expect(queue.cancel(b) == nil, "a popped entry's handle is stale")
        #expect(queue.count == 1)
    }

    @Test func aPayloadIsReleasedWhenItsEntryLeaves() {
        weak var watched: Box?
        var queue = DeadlineQueue<Box>()
        var id: DeadlineQueue<Box>.ID?
        do {
            let box = Box(1)
            watched = box
            id = queue.schedule(box, at: 10)
        }
        queue.schedule(Box(2), at: 5)
        #expect(watched != nil)
        queue.cancel(id!)
        #expect(watched == nil, "cancelled: released at once, not at its time")
        do {
            let box = Box(3)
            watched = box
            queue.schedule(box, at: 1)
        }
        _ = queue.popDue(now: 1)
        #expect(watched == nil, "popped: released with the popped tuple")
    }

    @Test func anExpiryMayScheduleAndCancelOthersWhileTheQueueIsDrained() {
        var queue = DeadlineQueue<String>()
        queue.schedule("first", at: 10)
        let victim = queue.schedule("victim", at: 10)
        queue.schedule("later", at: 50)
        var order: [String] = []
        while let entry = queue.popDue(now: 10) {
            order.append(entry.payload)
            #expect(queue.cancel(entry.id) == nil, "its own handle is already stale")
            if entry.payload == "first" {
                queue.cancel(victim)
                queue.schedule("due-now", at: 10)  // behind everything already due at 10
                queue.schedule("due-later", at: 11)
            }
        }
        #expect(order == ["first", "due-now"])
        #expect(queue.dueTimes == [11, 50])
    }

    /// A seeded random walk of schedules, moves, cancels and pops against a
    /// sorted array: the same entries come out in the same order.
    @Test func randomOperationsMatchASortedReference() {
        var rng = SplitMix64(seed: 0x5EED)
        var queue = DeadlineQueue<Int>()
        var reference: [(at: Int64, rank: Int, seq: Int, value: Int)] = []
        var handles: [Int: DeadlineQueue<Int>.ID] = [:]
        var stale: [DeadlineQueue<Int>.ID] = []
        var seq = 0
        var now: Int64 = 0
        var nextValue = 0
        for _ in 0..<20_000 {
            switch rng.next() % 10 {
            case 0...3:
                let at = now + Int64(rng.next() % 1000)
                let rank = Int(rng.next() % 3)
                seq += 1
                handles[nextValue] = queue.schedule(nextValue, at: at, rank: rank)
                reference.append((at, rank, seq, nextValue))
                nextValue += 1
            case 4, 5:
                guard let index = reference.indices.randomElement(using: &rng) else { continue }
                let at = now + Int64(rng.next() % 1000)
                seq += 1
                let moved = queue.reschedule(handles[reference[index].value]!, at: at)
                #expect(moved)
                reference[index].at = at
                reference[index].seq = seq
            case 6:
                guard let index = reference.indices.randomElement(using: &rng) else { continue }
                let value = reference.remove(at: index).value
                let id = handles.removeValue(forKey: value)!
                #expect(queue.cancel(id) == value)
                stale.append(id)
            case 7:
                if let id = stale.randomElement(using: &rng) {
                    #expect(queue.cancel(id) == nil && !queue.reschedule(id, at: now))
                }
            default:
                now += Int64(rng.next() % 300)
                reference.sort { ($0.at, $0.rank, $0.seq) < ($1.at, $1.rank, $1.seq) }
                var expected: [Int] = []
                while let first = reference.first, first.at <= now { expected.append(reference.removeFirst().value) }
                var popped: [Int] = []
                while let entry = queue.popDue(now: now) {
                    popped.append(entry.payload)
                    stale.append(handles.removeValue(forKey: entry.payload)!)
                }
                #expect(popped == expected)
            }
            #expect(queue.count == reference.count)
            #expect(queue.next == reference.map(\.at).min())
        }
    }

    /// The bound (docs/RELIABILITY.md, Limits): churn of 100,000 schedules
    /// and cancels leaves exactly the live entries, in as many slots as were
    /// ever live at once.
    @Test func churnLeavesOnlyTheLiveEntries() {
        var queue = DeadlineQueue<Int>()
        var live: [DeadlineQueue<Int>.ID] = []
        for round in 0..<100_000 {
            live.append(queue.schedule(round, at: Int64(round % 977)))
            if live.count > 100 { queue.cancel(live.removeFirst()) }
            if round % 3 == 0, let last = live.last { queue.reschedule(last, at: Int64(round)) }
        }
        #expect(queue.count == live.count && live.count == 100)
        #expect(queue.capacity == 101, "slots are reused: as many as were live at once")
        for id in live { queue.cancel(id) }
        #expect(queue.count == 0 && queue.next == nil)
    }
}

/// A small seeded generator, so that the random check is the same every run.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
