#if DEBUG
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
#endif

/// The thread that owns one `RoomServer` and everything under it
/// (docs/ARCHITECTURE.md, "Threads and who owns what"): the thread that made
/// it, until `run()` takes it over (`adopt`), so that `roomd serve` may build
/// and start every server on the main thread and run each on its own
/// (`--threads N`). The components a server builds get its `ServiceThread`
/// and check it at their entry points, the way swift-nio's `NIOLoopBound`
/// checks its event loop: a touch from another thread stops the process.
///
/// Debug builds only (`make test`, the sanitizer and fuzz builds): in release
/// builds the type has no stored property and every check is an empty inlined
/// function, so passing and checking it costs nothing.
struct ServiceThread: Sendable {
    #if DEBUG
    /// The owner's `pthread_self()`. Atomic, so that a check made from a
    /// wrong thread is not itself a data race (ThreadSanitizer).
    private final class Owner: Sendable {
        let id: Atomic<UInt>
        init(_ id: UInt) { self.id = Atomic(id) }
    }

    private let owner: Owner

    /// The calling thread's id: glibc's `pthread_t`, a thread-local read. A
    /// service thread lives as long as the process, so its id is never reused
    /// while it owns a server.
    static var currentID: UInt { UInt(pthread_self()) }

    /// Whether the calling thread owns this service thread's state.
    var isCurrent: Bool { owner.id.load(ordering: .relaxed) == Self.currentID }
    #endif

    /// Owned by the calling thread.
    init() {
        #if DEBUG
        owner = Owner(Self.currentID)
        #endif
    }

    /// `RoomServer.run()`: from now on the calling thread owns the server.
    func adopt() {
        #if DEBUG
        owner.id.store(Self.currentID, ordering: .relaxed)
        #endif
    }

    /// Stops the process (debug builds) unless the calling thread owns the server.
    @inline(__always)
    func assertIsCurrent(file: StaticString = #fileID, line: UInt = #line) {
        #if DEBUG
        precondition(
            isCurrent,
            "touched off its service thread (docs/ARCHITECTURE.md, Threads)",
            file: file,
            line: line
        )
        #endif
    }
}

/// A value only its service thread reads or writes, checked on every access
/// in debug builds (swift-nio's `NIOLoopBound`, debug-only); in release
/// builds it is the value alone.
struct ServiceThreadBound<Value> {
    private let thread: ServiceThread
    private var stored: Value

    init(_ value: Value, on thread: ServiceThread) {
        thread.assertIsCurrent()
        self.thread = thread
        stored = value
    }

    var value: Value {
        get {
            thread.assertIsCurrent()
            return stored
        }
        set {
            thread.assertIsCurrent()
            stored = newValue
        }
    }
}
