import Foundation
import Logging
import RoomConfig
import Synchronization
import Testing

@testable import RoomServer

#if DEBUG
/// The service thread's check (Transport/ServiceThread.swift): whose a
/// server's state is. A touch from another thread stops the process, which
/// an in-process test cannot watch; so the logic that decides it is tested
/// here, and every integration test runs the debug daemon, where every
/// check runs.
@Suite struct ServiceThreadTests {
    /// Runs `body` on a second thread while the calling one waits for it:
    /// both are alive, so their ids differ (a finished thread's may be reused).
    static func onSecondThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<T?>(nil)
        let thread = Thread {
            let value = body()
            result.withLock { $0 = value }
            done.signal()
        }
        thread.start()
        done.wait()
        return result.withLock { $0! }
    }

    @Test func aServiceThreadIsItsMakersUntilAnotherAdoptsIt() async {
        let seen = await onThread { () -> [Bool] in
            let thread = ServiceThread()
            var seen = [thread.isCurrent]
            seen += Self.onSecondThread {
                let before = thread.isCurrent
                thread.adopt()  // `run()` on a thread of its own
                return [before, thread.isCurrent]
            }
            seen.append(thread.isCurrent)
            return seen
        }
        #expect(seen == [true, false, true, false], "maker; not another; the adopter; no longer the maker")
    }

    /// `--threads N`: every server is made on the main thread, each runs on its own.
    @Test func eachServerHasAThreadOfItsOwn() async {
        let seen = await onThread { () -> [Bool] in
            let template = RoleTemplate(name: "test", roles: [Role(name: "host")])
            let options = ServerOptions(port: 0, template: template, secret: Array(repeating: 7, count: 32))
            let first = RoomServer(options: options, logger: Logger(label: "test"))
            let second = RoomServer(options: options, logger: Logger(label: "test"))
            var seen = [first.thread.isCurrent, second.thread.isCurrent]
            seen += Self.onSecondThread {
                second.thread.adopt()
                return [first.thread.isCurrent, second.thread.isCurrent]
            }
            seen += [first.thread.isCurrent, second.thread.isCurrent]
            return seen
        }
        #expect(seen == [true, true, false, true, true, false])
    }

    @Test func aBoundValueIsReadAndWrittenOnItsThread() {
        var bound = ServiceThreadBound(1, on: ServiceThread())
        bound.value += 1
        #expect(bound.value == 2)
    }

    /// `Frame.queuedOn` is not atomic: the first queue records whose it is.
    @Test func aQueuedFrameIsTheQueuingThreads() {
        let frame = Frame(wire: [1])
        var first = FrameQueue()
        var second = FrameQueue()
        first.append(frame)
        second.append(frame)
        #expect(frame.queuedBy == ServiceThread.currentID)
        first.removeFirst()
        second.removeFirst()
        #expect(frame.queuedOn == 0)
    }
}
#endif
