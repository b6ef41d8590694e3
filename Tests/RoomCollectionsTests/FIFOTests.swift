import RoomCollections
import Testing

/// The one FIFO (Sources/RoomCollections/FIFO.swift): a ring buffer that
/// wraps, grows, and lets go of what leaves it at once.
@Suite struct FIFOTests {
    final class Box {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    @Test func elementsLeaveInTheOrderTheyCameWhileTheRingWrapsAndGrows() {
        var queue = FIFO<Int>()
        var expected: [Int] = []
        var left: [Int] = []
        var next = 0
        for round in 0..<50 {  // in more than out, then out more than in: head and tail wrap many times
            for _ in 0..<(round < 25 ? 7 : 3) {
                queue.append(next)
                expected.append(next)
                next += 1
            }
            for _ in 0..<(round < 25 ? 5 : 6) {
                guard let value = queue.popFirst() else { break }
                left.append(value)
            }
            #expect(queue.count == expected.count - left.count)
            #expect(Array(queue) == Array(expected[left.count...]), "front to back, round \(round)")
            #expect(queue.first == expected.dropFirst(left.count).first)
            #expect(queue.last == (queue.isEmpty ? nil : expected.last))
        }
        while let value = queue.popFirst() { left.append(value) }
        #expect(left == expected)
        #expect(queue.isEmpty && queue.first == nil && queue.popFirst() == nil)
    }

    @Test func removeFirstCountWhileAndFromTheMiddle() {
        var queue: FIFO<Int> = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
        queue.removeFirst(3)
        #expect(Array(queue) == [3, 4, 5, 6, 7, 8, 9])
        queue.removeFirst(while: { $0 < 5 })
        #expect(Array(queue) == [5, 6, 7, 8, 9])
        for value in 10..<14 { queue.append(value) }
        #expect(queue.remove(at: 2) == 7)
        #expect(queue.remove(at: 0) == 5)
        #expect(queue.remove(at: queue.count - 1) == 13)
        #expect(Array(queue) == [6, 8, 9, 10, 11, 12])
        #expect(queue[1] == 8)
        queue[1] = 80
        #expect(queue[1] == 80)
        queue.removeFirst(100)
        #expect(queue.isEmpty)
        queue.append(1)
        #expect(Array(queue) == [1])
    }

    @Test func aPoppedElementIsReleasedAtOnce() {
        weak var watched: Box?
        var queue = FIFO<Box>()
        do {
            let box = Box(1)
            watched = box
            queue.append(box)
            queue.append(Box(2))
        }
        #expect(watched != nil)
        queue.removeFirst()
        #expect(watched == nil, "the slot is cleared when its element leaves")
        do {
            let box = Box(3)
            watched = box
            queue.append(box)
        }
        _ = queue.remove(at: 1)
        #expect(watched == nil, "and when it leaves from the middle")
        do {
            let box = Box(4)
            watched = box
            queue.append(box)
        }
        queue.removeAll(keepingCapacity: true)
        #expect(watched == nil && queue.isEmpty && queue.capacity > 0)
        queue.removeAll()
        #expect(queue.capacity == 0)
    }

    @Test func equalityIsByContentsNotStorage() {
        var a = FIFO<Int>(minimumCapacity: 64)
        var b = FIFO<Int>()
        for value in 0..<10 { a.append(value) }
        for value in -5..<10 { b.append(value) }
        b.removeFirst(5)
        #expect(a == b, "same elements, other capacity and head")
        b.append(10)
        #expect(a != b)
        #expect(FIFO<Int>() == FIFO<Int>(minimumCapacity: 8))
    }

    @Test func growingKeepsTheOrderWhateverTheHead() {
        for start in 0..<8 {
            var queue = FIFO<Int>(minimumCapacity: 8)
            for value in 0..<start { queue.append(-value) }
            queue.removeFirst(start)  // the head sits at `start`
            for value in 0..<40 { queue.append(value) }
            #expect(Array(queue) == Array(0..<40), "head at \(start)")
        }
    }
}
