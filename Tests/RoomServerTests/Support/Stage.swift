import Foundation
import RoomClient
import RoomWire

/// A room with one peer per shipped role, joined over real sockets, with the
/// join pushes already consumed.
struct Stage {
    let daemon: Daemon
    let host: RoomClient, guest: RoomClient, viewer: RoomClient, moderator: RoomClient
    let ids: [String: String]
    var all: [RoomClient] { [host, guest, viewer, moderator] }

    init(daemon given: Daemon? = nil, room: String = "room-1") async throws {
        let daemon: Daemon
        if let given { daemon = given } else { daemon = try await Daemon.start() }
        self.daemon = daemon
        var ids: [String: String] = [:]
        var clients: [RoomClient] = []
        for (user, role) in [("h", "host"), ("g", "guest"), ("v", "viewer"), ("m", "moderator")] {
            let (client, result) = try await daemon.join(user, as: role, room: room)
            ids[role] = result["peer"]?["peer_id"]?.stringValue
            clients.append(client)
        }
        (host, guest, viewer, moderator) = (clients[0], clients[1], clients[2], clients[3])
        self.ids = ids
        try await settle()
    }

    func id(_ role: String) -> JSON { .string(ids[role]!) }

    /// Waits until every peer got everything pending (a ping round trip each), then drops it.
    func settle() async throws {
        for client in all where !client.isClosed { _ = try await client.call("ping") }
        try await Task.sleep(for: .milliseconds(50))
        for client in all { _ = client.drain() }
    }

    /// The push methods a client got within `window`, in order.
    static func methods(_ client: RoomClient, within window: Duration = .milliseconds(150)) async -> [String] {
        await client.expectSilence(for: window).compactMap { $0["method"]?.stringValue }
    }
}
