import Foundation
import RoomCluster
import RoomdTesting
import Testing

/// A room's saved state in chunks (`StateLayout`, `RoomStates`): what a save
/// writes, and that a state of any size comes back whole.
struct StateLayoutTests {
    /// A JSON-like state of `count` messages of about 1 KiB, numbered from `first`.
    static func state(_ first: Int, _ count: Int) -> [UInt8] {
        var out = Array(#"{"messages":["#.utf8)
        for n in first..<(first + count) {
            out += Array(#"{"id":"m\#(n)","text":"\#(n) "#.utf8)
            var seed = UInt64(n) &* 0x9E37_79B9_7F4A_7C15
            for _ in 0..<1000 {
                seed = seed &* 6_364_136_223_846_793_005 &+ 1
                out.append(UInt8(ascii: "a") + UInt8(seed >> 59))
            }
            out += Array(#""},"#.utf8)
        }
        out += Array("]}".utf8)
        return out
    }

    static func plan(_ bytes: [UInt8], over previous: StateLayout?) -> (StateLayout, [(slot: Int, range: Range<Int>)]) {
        bytes.withUnsafeBytes { StateLayout.plan($0, over: previous) }
    }

    @Test func chunksAreWithinTheirBoundsAndCoverTheState() {
        let bytes = Self.state(0, 4000)  // ~4 MB
        let ends = bytes.withUnsafeBytes { StateLayout.cuts($0) }
        #expect(ends.last == bytes.count)
        var start = 0
        for (i, end) in ends.enumerated() {
            #expect(end - start <= StateLayout.maxChunk)
            if i < ends.count - 1 { #expect(end - start >= StateLayout.minChunk) }
            start = end
        }
        let average = bytes.count / ends.count
        #expect(average > 16 * 1024 && average < 128 * 1024, "\(ends.count) chunks, \(average) bytes on average")
        #expect(bytes.withUnsafeBytes { StateLayout.cuts($0) } == ends, "the same bytes, the same cuts")
        #expect([UInt8]().withUnsafeBytes { StateLayout.cuts($0) }.isEmpty)
    }

    /// A message appended to a full history and the oldest evicted: the save
    /// writes a few chunks, not the history.
    @Test func aSaveWritesOnlyWhatChanged() {
        let before = Self.state(0, 4000)
        let (first, writes) = Self.plan(before, over: nil)
        #expect(writes.count == first.chunks.count, "a first save writes every chunk")
        let after = Self.state(1, 4000)
        let (second, changed) = Self.plan(after, over: first)
        let written = changed.reduce(0) { $0 + $1.range.count }
        #expect(
            changed.count <= 4 && written < 600 * 1024,
            "\(changed.count) chunks, \(written) bytes of \(after.count)"
        )
        let named = Set(first.chunks.map(\.slot))
        #expect(changed.allSatisfy { !named.contains($0.slot) }, "never over a slot the manifest in force names")
        #expect(second.length == after.count)
        let (_, none) = Self.plan(after, over: second)
        #expect(none.isEmpty, "an unchanged state writes nothing")
        #expect(second.slots <= first.chunks.count + changed.count)
    }

    @Test func theManifestRoundTripsAndABrokenOneIsNotRead() {
        let (layout, _) = Self.plan(Self.state(0, 300), over: nil)
        let manifest = layout.encoded()
        #expect(StateLayout(manifest: manifest) == layout)
        #expect(StateLayout(manifest: Array(manifest.dropLast())) == nil)
        #expect(StateLayout(manifest: Array(#"{"format":2}"#.utf8)) == nil)
        #expect(!StateLayout.isManifest(Array(#"{"format":2}"#.utf8)))
    }

    /// Against nats-server: a 12 MB state is saved and loaded whole, saved
    /// again over itself writing little, and deleted with its slots.
    @Test func aLargeStateIsSavedAndLoadedWholeOnTheBus() throws {
        let nats = try NatsServerProcess.start()
        defer { nats.remove() }
        let node = RoomClusterTests.node("saver", nats)
        defer { node.stop() }
        #expect(RoomClusterTests.eventually { node.states != nil })
        let states = try #require(node.states)
        let big = Self.state(0, 12_000)
        let (layout, written) = try states.save("big room", big, over: nil)
        #expect(written >= big.count)
        let loaded = try #require(try states.load("big room"))
        #expect(loaded.bytes == big)
        #expect(loaded.layout == layout)
        let next = Self.state(1, 12_000)
        let (_, again) = try states.save("big room", next, over: layout)
        #expect(again < 700 * 1024, "\(again) bytes written for one message in, one out")
        #expect(try states.load("big room")?.bytes == next)
        try states.delete("big room", layout: nil)
        #expect(try states.load("big room") == nil)
        // A state written whole by an older build is read as it is.
        let old = Array(#"{"format":2,"id":"old"}"#.utf8)
        _ = try states.save("old", old, over: nil)
        #expect(try states.load("old")?.bytes == old)
    }
}
