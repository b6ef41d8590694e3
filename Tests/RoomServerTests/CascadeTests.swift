import Foundation
import RoomClient
import RoomWire
import Testing

/// A cascade whose length a client controls must not grow the daemon's
/// stack: many peers of one room in their reconnect grace at the held-push
/// limit all leave at once on the next push, and each leave is one more
/// push to the others. (It crashed roomd when it was recursive.)
@Suite struct CascadeTests {
    @Test func everyGraceEndingAtOnceIsOneIterativeCascade() async throws {
        let peers = 300
        // A small stack (256 KiB instead of 8 MiB) makes a recursion as deep
        // as the room crash at this size; an iterative cascade does not care.
        let daemon = try await Daemon.start(
            settings:
                #"{"room":{"reconnect_grace_s":60,"large_room_threshold":100000},"limits":{"messages_per_second":10000,"message_burst":10000}}"#,
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
        for index in 0..<256 {  // the held-push limit, reached by every viewer together
            _ = try await host.call("broadcast", ["info": ["message": .string("m\(index)")]], timeout: .seconds(30))
        }
        _ = try await host.call("broadcast", ["info": ["message": "one too many"]], timeout: .seconds(30))
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
