import RoomConfig
import RoomWire
import Testing

@testable import RoomModel

/// The session store in the model: versions, deletes, limits, bounded tombstones, listeners.
@Suite struct SessionStoreModelTests {
    let registry: RoomRegistry
    let host: Peer, viewer: Peer, restricted: Peer

    init() throws {
        var settings = Settings()
        settings.limits.maxSessionKeys = 3
        settings.limits.maxSessionValueBytes = 8
        let clock = ManualClock()
        registry = RoomRegistry(
            template: Fixtures.template(settings: settings),
            clock: clock,
            ids: SequentialIDGenerator()
        )
        host = try registry.join(Fixtures.request("h", role: "host")).peer
        viewer = try registry.join(Fixtures.request("v", role: "viewer")).peer
        restricted = try registry.join(Fixtures.request("r", role: "viewer", viewOnly: true)).peer
    }

    func set(_ key: String, _ value: JSON, by peer: Peer? = nil) throws -> (SessionEntry, [Delivery]) {
        try registry.setMetadata(by: peer.map(Initiator.peer) ?? .server, in: host.room, key: key, value: value)
    }

    @Test func listenersOnlyAndVersions() throws {
        _ = try registry.listenMetadata(viewer, keys: ["a"])
        _ = try registry.listenMetadata(restricted, keys: ["*"])
        let (entry, deliveries) = try set("a", 1, by: host)
        #expect(entry.version == 1 && entry.updatedBy?.peerID == host.id.rawValue)
        #expect(deliveries.sent == [Sent(push: "on-metadata-change:a@1", to: [viewer.id, restricted.id])])
        #expect(try set("b", 2).1.sent == [Sent(push: "on-metadata-change:b@1", to: [restricted.id])])
        #expect(try registry.listenMetadata(viewer, keys: []) == [])
        #expect(try set("a", 1).1.sent == [Sent(push: "on-metadata-change:a@2", to: [restricted.id])])
        #expect(code { _ = try set("c", 1, by: restricted) } == .permissionDenied)
    }

    @Test func limitsCountLiveKeysAndTombstonesAreBounded() throws {
        #expect(code { _ = try set("a", "12345678") } == .tooLarge, "10 bytes encoded")
        for key in ["a", "b", "c"] { _ = try set(key, 1) }
        #expect(code { _ = try set("d", 1) } == .tooMany)
        _ = try set("a", nil)
        _ = try set("d", 1)
        #expect(host.room.sessionStore.entry("a").version == 2, "a tombstone keeps its version")
        // Deleting many keys keeps at most max_session_keys tombstones: the oldest are forgotten.
        for key in ["b", "c", "d"] { _ = try set(key, nil) }
        for key in ["e", "f", "g"] {
            _ = try set(key, 1)
            _ = try set(key, nil)
        }
        #expect(host.room.sessionStore.entries.count == 3, "3 tombstones, no live key")
        #expect(host.room.sessionStore.entry("a").version == 0, "the oldest tombstone was forgotten")
        #expect(host.room.sessionStore.entry("g").version == 2)
    }

    /// Issue 20, item 3: deletes of one key (a guest can send them all
    /// session long) append nothing: one tombstone, one entry; deletes of
    /// ever new keys keep max_session_keys tombstones. So the room's saved
    /// state (its snapshot) stays as small as the store allows.
    @Test func deletesCostNoMemoryBeyondTheKeysTheyName() throws {
        var store = SessionStore()
        for _ in 0..<1_000_000 {
            _ = try store.set("k", value: SessionStore.null, by: .server, at: 0, maxKeys: 256)
        }
        #expect(store.tombstones == ["k"])
        #expect(store.entries.count == 1)
        #expect(store.entry("k").version == 1_000_000, "versions never go back")
        for n in 0..<100_000 {
            _ = try store.set("k\(n)", value: SessionStore.null, by: .server, at: 0, maxKeys: 256)
        }
        #expect(store.tombstones.count == 256)
        #expect(store.entries.count == 256)
        // Set again, a deleted key loses its tombstone; deleted again, it has one.
        _ = try store.set("k99999", value: [0x31], by: .server, at: 0, maxKeys: 256)
        #expect(store.tombstones.count == 255 && !store.tombstones.contains("k99999"))
        _ = try store.set("k99999", value: SessionStore.null, by: .server, at: 0, maxKeys: 256)
        #expect(store.tombstones.last == "k99999" && store.tombstones.count == 256)

        for _ in 0..<10_000 { _ = try set("a", nil) }
        let saved = registry.snapshot(of: host.room).encodeJSON()
        #expect(saved.count < 4096, "the room's saved state: \(saved.count) bytes")
    }
}
