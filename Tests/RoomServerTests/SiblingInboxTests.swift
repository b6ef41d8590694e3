import Logging
import RoomCluster
import RoomConfig
import RoomModel
import Testing

@testable import RoomServer

/// `roomd --threads N`: records between the service threads of one process go
/// to the other thread's inbox instead of through nats-server, and that inbox
/// is bounded like a NATS subscription (CLUSTER.md, "Service threads"). The
/// bound is tested on a server that is not running: a thread of a live
/// process cannot be stopped alone.
@Suite struct SiblingInboxTests {
    static func server() -> RoomServer {
        let template = RoleTemplate(name: "test", roles: [Role(name: "host")])
        return RoomServer(
            options: ServerOptions(port: 0, template: template, secret: Array(repeating: 7, count: 32)),
            logger: Logger(label: "test")
        )
    }

    @Test func recordsForASiblingStopAtTheBusPendingBoundAndFlowAgainOnceDrained() {
        let server = Self.server()
        let record = [UInt8](repeating: 0, count: 1 << 20)
        var accepted = 0
        while accepted <= 100, server.postFromSibling(record) { accepted += 1 }
        #expect(
            accepted == RoomCluster.maxPendingBytes / record.count,
            "64 MiB wait at most, as on a NATS subscription"
        )
        #expect(!server.postFromSibling([1]), "not one byte more")
        server.drainInbox()  // what the sibling's loop does on its next turn
        #expect(server.postFromSibling(record), "a drained inbox takes records again")
    }
}
