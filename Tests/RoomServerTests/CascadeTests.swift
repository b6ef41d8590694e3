import Foundation
import RoomClient
import RoomWire
import Testing

/// A cascade whose length a client controls must not grow the daemon's
/// stack: many peers of one room in their reconnect grace near their held
/// bytes' budget (`resume_buffer_bytes`) all leave at once on the next push,
/// and each leave is one more push to the others. (It crashed roomd when it
/// was recursive.)
@Suite struct CascadeTests {
    @Test func everyGraceEndingAtOnceIsOneIterativeCascade() async throws {
        let peers = 300
        // A small stack (256 KiB instead of 8 MiB) makes a recursion as deep
        // as the room crash at this size; an iterative cascade does not care.
        let daemon = try await Daemon.start(
            settings:
                #"{"room":{"reconnect_grace_s":60,"large_room_threshold":100000,"resume_buffer_bytes":65536},"#
                + #""limits":{"messages_per_second":10000,"message_burst":10000,"max_chat_bytes":65536}}"#,
            limits: ["-s 256"]
        )
        let (host, _) = try await daemon.join("h", as: "host")
        var sockets: [RawSocket] = []
        for index in 0..<peers {
            let socket = try RawSocket(port: daemon.port)
            let token = try daemon.token(user: "v\(index)", role: "viewer")
            try socket.sendText(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#)
            while let frame = await socket.readFrame() {
                if String(decoding: frame.payload, as: UTF8.self).contains(#""id":1"#) { break }
            }
            sockets.append(socket)
        }
        sockets.removeAll()  // every viewer drops without leave: all in their grace
        try await daemon.waitForGraces(peers)
        _ = host.drain()
        // Generous timeouts: under CI's load (every suite starting at once) a call here once
        // took over 5 s; what the test asserts is that the cascade ends, not how fast.
        // ~40 KB held by every viewer together (within 64 KiB), then ~40 KB more: past it.
        let text = String(repeating: "x", count: 40_000)
        _ = try await host.call("broadcast", ["info": ["message": .string(text)]], timeout: .seconds(30))
        #expect(await host.expectSilence(for: .milliseconds(300)).allSatisfy { $0["method"] != "on-peer-leave" })
        _ = try await host.call(
            "broadcast",
            ["info": ["message": .string("one too many" + text)]],
            timeout: .seconds(30)
        )
        var left = Set<String>()
        while left.count < peers {
            let push = try await host.next("on-peer-leave", timeout: .seconds(30))
            left.insert(push["peer_id"]?.stringValue ?? "")
        }
        #expect(left.count == peers)
        #expect(try await host.call("ping")["server_time"] != nil)
        #expect(try await healthStatusLine(port: daemon.port) == "HTTP/1.1 200 OK")
    }
}
