import Dispatch
import RoomModel

#if canImport(Glibc)
import Glibc
#endif

/// Frees what a service thread let go of, on a queue of its own (issue 34):
/// `chat-clear` takes a room's whole history and its messages' reactions out
/// at once (RoomModel's `ChatClear.dropped`), and freeing that — 10,000
/// messages and 100,000 reaction counts, ~200,000 allocations — held the
/// service thread, and so every room of the node, for 0.2–0.6 s.
///
/// Freed a batch at a time (`batch` allocations, then a `pause`): freed at
/// once from another thread, the small blocks piled up in glibc's fastbins
/// of the service thread's arena, and its next large `malloc` consolidated
/// them all — a ping in another room waited 11–69 ms in the second after
/// the clear (scripts/bench/chat_clear.py; 6–7 ms with fastbins off). After
/// each batch the graveyard consolidates them itself (`malloc_trim(0)`), so
/// the service thread meets at most one batch's worth, or waits for one
/// consolidation of it (measured: 5–9 ms, the machine's noise then; batches
/// of 500 and 2,000 did no better).
///
/// What is buried belongs to the graveyard's serial queue
/// (`roomd-graveyard`) from `bury` on: it is released there, and nothing
/// else touches it. Values only (`Sendable`), so no object of a service
/// thread ever runs its `deinit` there.
final class Graveyard: Sendable {
    /// Allocations freed per step.
    static let batch = 8000
    /// The pause between two steps.
    static let pause = DispatchTimeInterval.milliseconds(2)
    private let queue = DispatchQueue(label: "roomd-graveyard", qos: .utility)

    /// Takes `value` over and releases it on the graveyard's queue. The
    /// caller hands over its only reference (`bury(consume x)`): a copy it
    /// kept would be released last, on its own thread, and free it there.
    func bury<T: Sendable>(_ value: consuming T) {
        let grave = Grave(consume value)
        queue.async { grave.empty() }
    }

    /// The same for a value freed a batch at a time (`chat-clear`'s).
    func bury(_ value: consuming ChatClear.Dropped) {
        let grave = PacedGrave(consume value)
        queue.async { [self] in step(grave) }
    }

    private func step(_ grave: PacedGrave) {
        let more = grave.release(upTo: Self.batch)
        Self.consolidate()
        if more { queue.asyncAfter(deadline: .now() + Self.pause) { [self] in step(grave) } }
    }

    /// glibc: the freed blocks are merged now, on this queue (`malloc_trim(0)`,
    /// looked up at run time: Swift's Glibc module does not declare it).
    private static func consolidate() {
        #if canImport(Glibc)
        _ = mallocTrim?(0)
        #endif
    }
}

#if canImport(Glibc)
/// glibc's `malloc_trim`, nil where the C library has none. Set once, read only.
private let mallocTrim: (@convention(c) (Int) -> Int32)? = {
    guard let symbol = dlsym(nil, "malloc_trim") else { return nil }
    return unsafeBitCast(symbol, to: (@convention(c) (Int) -> Int32).self)
}()
#endif

/// One buried value. `@unchecked Sendable`: the service thread makes it in
/// `bury` and gives it up there; from then on only the graveyard's queue
/// touches `value` (in `empty`).
private final class Grave<T: Sendable>: @unchecked Sendable {
    private var value: T?

    init(_ value: consuming T) { self.value = .some(consume value) }

    func empty() { value = nil }
}

/// A buried `chat-clear`'s storage, freed in steps. `@unchecked Sendable`:
/// made by the service thread in `bury`, touched only by the graveyard's
/// queue after (in `release`, one step at a time).
private final class PacedGrave: @unchecked Sendable {
    private var value: ChatClear.Dropped

    init(_ value: consuming ChatClear.Dropped) { self.value = consume value }

    func release(upTo budget: Int) -> Bool { value.release(upTo: budget) }
}
