import CWebSockets
import Foundation
import RoomClient
import RoomWire
import Testing

/// permessage-deflate (RFC 7692; PROTOCOL.md section 1) over real sockets:
/// what roomd answers an offer, a push compressed once for every client that
/// negotiated it (and plain for the others), compressed calls from a client,
/// and the inflate bomb held at `max_message_bytes`.
@Suite struct DeflateTests {
    /// What browsers and the Python kit offer.
    static let offer = "permessage-deflate; client_max_window_bits"

    @Test func anOfferIsAnsweredWithBothNoContextTakeoverFlags() async throws {
        let daemon = try await Daemon.start()
        let offering = try RawSocket(port: daemon.port, extensions: Self.offer)
        #expect(
            offering.extensionsAnswer == "permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        )
        let asking = try RawSocket(port: daemon.port, extensions: "permessage-deflate; server_no_context_takeover")
        #expect(asking.extensionsAnswer == "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
        #expect(try RawSocket(port: daemon.port).extensionsAnswer == nil)
        // A server window lws 4.1.6 cannot answer: declined, and the socket works uncompressed.
        let windowed = try RawSocket(port: daemon.port, extensions: "permessage-deflate; server_max_window_bits=10")
        #expect(windowed.extensionsAnswer == nil)
        let answer = try await Self.joined(windowed, daemon: daemon, user: "w")
        #expect(answer.first == 0x81)
    }

    @Test func aPushIsCompressedOnceForEveryClientThatNegotiatedIt() async throws {
        let daemon = try await Daemon.start()
        var compressed: [RawSocket] = []
        for index in 0..<3 {
            let socket = try RawSocket(port: daemon.port, extensions: Self.offer)
            let answer = try await Self.joined(socket, daemon: daemon, user: "c\(index)")
            #expect(answer.first == 0xC1, "the join answer (kilobytes of room state) is compressed")
            compressed.append(socket)
        }
        let plain = try RawSocket(port: daemon.port)
        _ = try await Self.joined(plain, daemon: daemon, user: "p")
        let (sender, _) = try await daemon.join("s", as: "host")
        let before = try await daemon.metric("roomd_deflated_frames_total") ?? 0
        let text = String(repeating: "the show starts in five minutes, grab a seat; ", count: 6)
        _ = try await sender.call("broadcast", ["info": ["message": .string(text)]])

        let expected = try #require(try await Self.next("on-broadcast", on: plain))
        #expect(expected.first == 0x81)
        for socket in compressed {
            let frame = try #require(try await Self.next("on-broadcast", on: socket))
            #expect(frame.first == 0xC1, "FIN, RSV1, text")
            #expect(frame.payload.count < expected.payload.count / 2)
            #expect(Zlib.inflate(frame.payload) == expected.payload, "the same push, byte for byte")
        }
        let after = try await daemon.metric("roomd_deflated_frames_total") ?? 0
        #expect(after - before == 1, "one deflate for the push, not one per recipient")
        #expect(try await daemon.metric("roomd_deflate_bytes_saved_total") ?? 0 > 0)

        // A short answer stays plain on a compressing connection.
        try compressed[0].sendText(#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#)
        let pong = try #require(try await Self.answer(7, on: compressed[0]))
        #expect(pong.first == 0x81)
    }

    @Test func aCompressedCallIsAnsweredAndABombStopsAtTheLimit() async throws {
        let daemon = try await Daemon.start()
        let socket = try RawSocket(port: daemon.port, extensions: Self.offer)
        _ = try await Self.joined(socket, daemon: daemon, user: "b")

        // A call the client compressed, exactly max_message_bytes (65,536) once inflated: answered.
        let head = #"{"jsonrpc":"2.0","id":8,"method":"ping""#
        let exact = head + String(repeating: " ", count: 65_536 - head.utf8.count - 1) + "}"
        try socket.sendAll(RawSocket.frame(Zlib.deflate(Array(exact.utf8)), opcode: 1, rsv1: true))
        #expect(try await Self.answer(8, on: socket) != nil)

        // One byte more, ~90 bytes on the wire: closed with 1009, and nobody else is held up.
        let over = head + String(repeating: " ", count: 65_537 - head.utf8.count - 1) + "}"
        let bomb = Zlib.deflate(Array(over.utf8))
        #expect(bomb.count < 200)
        try socket.sendAll(RawSocket.frame(bomb, opcode: 1, rsv1: true))
        #expect(await socket.readCloseCode() == 1009)
        let (other, _) = try await daemon.join("o", as: "viewer")
        #expect(try await other.call("ping")["server_time"] != nil)
    }

    /// On a compressing connection roomd's close waits for the client's close frame
    /// (libwebsockets would end TCP right after its own, and Node's WebSocket, which
    /// inflates off its reading path, then reported 1006 instead of the code), and
    /// for at most 2 s when the client never answers.
    @Test func aCloseWaitsForTheClientsCloseFrame() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host")
        func removed(_ user: String) async throws -> RawSocket {
            let socket = try RawSocket(port: daemon.port, extensions: Self.offer)
            _ = try await Self.joined(socket, daemon: daemon, user: user)
            let joined = try await host.next("on-peer-join")
            let peerID = try #require(joined["peer"]?["peer_id"]?.stringValue)
            _ = try await host.call("peer-leave-request", ["requested_for": .string(peerID)])
            #expect(try await Self.next("on-peer-leave-request", on: socket) != nil)
            #expect(await socket.readCloseCode() == 4001)
            return socket
        }
        // Still open while the client has not answered (lws alone ends it at once),
        // looked at as soon as the close frame is read: roomd waits 2 s at most.
        let answers = try await removed("answers")
        #expect(await !answers.endsWithin(milliseconds: 300), "open until the client's close frame")
        try answers.sendAll(RawSocket.frame([0x0F, 0xA1], opcode: 8))
        #expect(await answers.readEnd(), "ended once the client answered")
        let silent = try await removed("silent")
        #expect(await silent.readEnd(), "ended without an answer, within the 5-s read timeout")
    }

    @Test func offIsNeverNegotiated() async throws {
        let daemon = try await Daemon.start(arguments: ["--no-permessage-deflate"])
        let socket = try RawSocket(port: daemon.port, extensions: Self.offer)
        #expect(socket.extensionsAnswer == nil)
        let answer = try await Self.joined(socket, daemon: daemon, user: "n")
        #expect(answer.first == 0x81)
    }

    // MARK: helpers

    /// Joins `socket` as a viewer of room-1; returns the join answer's frame.
    static func joined(
        _ socket: RawSocket,
        daemon: Daemon,
        user: String
    ) async throws -> (first: UInt8, payload: [UInt8]) {
        let token = try daemon.token(user: user, role: "viewer")
        try socket.sendText(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#)
        return try #require(try await answer(1, on: socket))
    }

    /// The next frame whose (inflated) text answers call `id`.
    static func answer(_ id: Int, on socket: RawSocket) async throws -> (first: UInt8, payload: [UInt8])? {
        try await next(on: socket) { $0["id"]?.intValue == id }
    }

    /// The next frame of push `method`.
    static func next(_ method: String, on socket: RawSocket) async throws -> (first: UInt8, payload: [UInt8])? {
        try await next(on: socket) { $0["method"]?.stringValue == method }
    }

    /// The next frame whose JSON (inflated when RSV1 is set) passes `matches`; the
    /// frame as it came (its payload still compressed). Nil when the socket ends.
    static func next(
        on socket: RawSocket,
        where matches: (JSON) -> Bool
    ) async throws -> (first: UInt8, payload: [UInt8])? {
        while let frame = await socket.readWireFrame() {
            let text = frame.first & 0x40 != 0 ? try #require(Zlib.inflate(frame.payload)) : frame.payload
            if let json = try? JSON.parse(text), matches(json) { return frame }
        }
        return nil
    }
}

/// Raw deflate as permessage-deflate frames it (RFC 7692 section 7.2), for the tests' client side.
enum Zlib {
    /// One message from a fresh state: a sync flush, its 00 00 FF FF left out.
    static func deflate(_ bytes: [UInt8]) -> [UInt8] {
        // zlib keeps the stream's address: one that does not move.
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        precondition(cws_deflate_init(stream, 6, 15, 8) == Z_OK)
        defer {
            deflateEnd(stream)
            stream.deallocate()
        }
        var output = [UInt8](repeating: 0, count: bytes.count + 64)
        let written = bytes.withUnsafeBufferPointer { input in
            output.withUnsafeMutableBufferPointer { out in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                stream.pointee.avail_in = UInt32(input.count)
                stream.pointee.next_out = out.baseAddress
                stream.pointee.avail_out = UInt32(out.count)
                precondition(CWebSockets.deflate(stream, Z_SYNC_FLUSH) == Z_OK && stream.pointee.avail_in == 0)
                return out.count - Int(stream.pointee.avail_out)
            }
        }
        return Array(output[..<(written - 4)])
    }

    /// A message's text, or nil when it does not inflate.
    static func inflate(_ bytes: [UInt8]) -> [UInt8]? {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer { stream.deallocate() }
        guard cws_inflate_init(stream, 15) == Z_OK else { return nil }
        defer { inflateEnd(stream) }
        let input = bytes + [0, 0, 0xFF, 0xFF]
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        return input.withUnsafeBufferPointer { input -> [UInt8]? in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
            stream.pointee.avail_in = UInt32(input.count)
            repeat {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { out -> (Int32, Int) in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = CWebSockets.inflate(stream, Z_SYNC_FLUSH)
                    return (status, out.count - Int(stream.pointee.avail_out))
                }
                guard status == Z_OK || status == Z_BUF_ERROR || status == Z_STREAM_END else { return nil }
                text += chunk[..<produced]
                if produced == 0 { break }
            } while stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0
            return text
        }
    }
}
