import Logging
import RoomConfig
import RoomModel
import Testing

@testable import RoomServer

/// Every model deadline is an entry of the registry's one queue, and the
/// loop asks that queue for the next time: a new kind of deadline fires on
/// test mode's manual clock with nothing wired but its type (issue #31).
/// The server is started (its schedule needs the loop's context) but not
/// run: `advance` is synchronous and this test is its only caller.
@Suite struct DeadlineKindTests {
    static let start: Int64 = 1_700_000_000_000

    /// A kind the server has never heard of: it notes when it fired.
    struct Beacon: ModelDeadline {
        static let rank = 100
        final class Log {
            var fired: [(id: Int, at: Int64)] = []
        }
        let id: Int
        let log: Log

        func expire(in registry: RoomRegistry, at now: Int64) -> Expired {
            log.fired.append((id, now))
            return Expired()
        }
    }

    static func server() throws -> RoomServer {
        let template = RoleTemplate(name: "test", roles: [Role(name: "host")])
        var options = ServerOptions(port: 0, template: template, secret: Array(repeating: 7, count: 32))
        options.host = "127.0.0.1"
        options.testMode = TestMode(clockStart: start)
        let server = RoomServer(options: options, logger: Logger(label: "test"))
        _ = try server.start(port: 0)
        return server
    }

    @Test func aNewKindFiresOnTheManualClockWithNoOtherWiring() throws {
        let server = try Self.server()
        let log = Beacon.Log()
        let registry = server.registry
        registry.schedule(Beacon(id: 1, log: log), at: Self.start + 5000)
        server.schedule.advance(to: Self.start + 4999)
        #expect(log.fired.isEmpty, "not before its time")
        server.schedule.advance(to: Self.start + 5000)
        #expect(log.fired.map(\.id) == [1] && log.fired.map(\.at) == [Self.start + 5000], "at its millisecond")

        // Moved, cancelled, and two at one millisecond: in the order scheduled.
        let moved = registry.schedule(Beacon(id: 2, log: log), at: Self.start + 9000)
        let cancelled = registry.schedule(Beacon(id: 3, log: log), at: Self.start + 6000)
        registry.schedule(Beacon(id: 4, log: log), at: Self.start + 7000)
        registry.schedule(Beacon(id: 5, log: log), at: Self.start + 7000)
        registry.reschedule(moved, at: Self.start + 6500)
        registry.cancel(cancelled)
        server.schedule.advance(to: Self.start + 60_000)
        #expect(log.fired.map(\.id) == [1, 2, 4, 5])
        #expect(log.fired.map(\.at) == [5000, 6500, 7000, 7000].map { Self.start + $0 }, "each at its own time")
        #expect(registry.deadlineCount == 0, "the queue holds the live deadlines only")
    }
}
