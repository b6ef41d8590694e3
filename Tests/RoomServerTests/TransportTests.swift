import Foundation
import RoomClient
import RoomWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Section 1: frames, limits, keepalive, slow consumers, shutdown, HTTP.
@Suite struct TransportTests {
    @Test func binaryMessageCloses1003() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        client.send(binary: [1, 2, 3])
        #expect(try await client.closeCode() == 1003)
    }

    @Test func invalidUTF8Closes1007() async throws {
        let daemon = try await Daemon.start()
        let raw = try RawSocket(port: daemon.port)
        try raw.sendFrame([0x7B, 0xC3, 0x28, 0x7D])  // "{", invalid 2-byte sequence, "}"
        #expect(await raw.readCloseCode() == 1007)
    }

    @Test func messageOverTheLimitCloses1009AndTheLimitItselfPasses() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"max_message_bytes":100000}}"#)
        let client = try await daemon.client()
        // Exactly at the limit: accepted (and larger than lws' 64 KiB rx buffer, so it arrives in pieces).
        let prefix = #"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"timestamp":""#
        let suffix = #""}}"#
        let pad = String(repeating: "x", count: 100_000 - prefix.utf8.count - suffix.utf8.count)
        client.send(text: prefix + pad + suffix)
        let reply = try await client.nextMessage()
        #expect(reply["result"]?["timestamp"]?.stringValue?.count == pad.count)
        client.send(text: prefix + pad + "y" + suffix)
        #expect(try await client.closeCode() == 1009)
    }

    @Test func defaultLimitIs64KiB() async throws {
        let daemon = try await Daemon.start()
        let client = try await daemon.client()
        client.send(text: String(repeating: " ", count: 65_537))
        #expect(try await client.closeCode() == 1009)
    }

    /// roomd writes what a dropped slow consumer still has partly written,
    /// then its 4008 close frame, as the kernel takes them; a client that
    /// takes nothing for 5 s more is cut off without one
    /// (`Connection.closeGraceSeconds`). So the slow peer reads its close on
    /// the same thread that sees the flooder told of the leave, a few
    /// microseconds later: on the test pool an await could be held up past
    /// those 5 s on a loaded machine, and the frame was then never sent.
    @Test func slowConsumerIsClosed4008AndMemoryStaysBounded() async throws {
        let daemon = try await Daemon.start(
            settings: """
                {"limits":{"max_outbound_bytes":262144,"messages_per_second":100000,"message_burst":100000},
                 "room":{"reconnect_grace_s":0}}
                """
        )
        // The slow peer joins over a raw socket with a tiny receive buffer, then never reads.
        let slow = try RawSocket(port: daemon.port, receiveBuffer: 4096)
        try slow.sendText(Self.join(try daemon.token(user: "slow", role: "viewer")))
        let joinReply = try #require(await slow.readFrame())
        let slowID = try JSON.parse(joinReply.payload)["result"]?["peer"]?["peer_id"]
        let flooder = try RawSocket(port: daemon.port, readTimeoutSeconds: 30)
        try flooder.sendText(Self.join(try daemon.token(user: "flood", role: "host")))
        _ = try #require(await flooder.readFrame())
        let baseline = daemon.residentKiB

        let chat = String(repeating: "m", count: 4000)
        let call = #"{"jsonrpc":"2.0","id":1,"method":"broadcast","params":{"info":{"message":"\#(chat)"}}}"#
        let batch = "[" + Array(repeating: call, count: 12).joined(separator: ",") + "]"
        let outcome = try await onThread { () throws -> [String] in
            var sent = 0
            var left: JSON?
            while sent < 12 * 1500, left == nil {
                try flooder.sendText(batch)
                sent += 12
                // Read up to this batch's answer; the leave push may come on the way.
                while let frame = flooder.readFrame() {
                    guard frame.opcode == 1 else { continue }  // a keepalive ping on a slow run
                    let message = try JSON.parse(frame.payload)
                    if message["method"] == "on-peer-leave" { left = message["params"] }
                    if message.arrayValue != nil { break }
                }
            }
            // 4008 is the last frame the slow peer gets once it reads again.
            let close = slow.readCloseCode()
            return ["\(sent)", left?.text ?? "", close.map { "\($0)" } ?? "none"]
        }
        let left = try JSON.parse(Array(outcome[1].utf8))
        #expect(left["peer_id"] == slowID)
        #expect(left["reason"] == "websocket closed")
        #expect(outcome[2] == "4008")
        let grown = daemon.residentKiB - baseline
        #expect(grown < 32 * 1024, "the daemon grew by \(grown) KiB after \(outcome[0]) broadcasts")
        // The daemon and the other peer are fine.
        try flooder.sendText(#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        let pong = try #require(await flooder.readFrame())
        #expect(try JSON.parse(pong.payload)["id"] == 2)
    }

    @Test func aBacklogLargerThanTheSocketReachesALateReaderWholeAndInOrderAroundItsPongs() async throws {
        // Writes leave at the end of the turn that queued them, or, when the
        // kernel does not take them all (lws keeps the rest), at the writable
        // callback: 8 MB of pushes (more than the kernel's send buffer takes)
        // to a client with a 4-KiB receive buffer
        // that only starts reading once all were sent, and pings while it
        // reads. lws writes its pong ahead of roomd's next write, so a write
        // that ended inside a frame would put the pong in the middle of it:
        // every write ends at a frame's end. Every frame arrives whole and in
        // order, each pong between two frames, and the answer to the
        // client's own call after them.
        let daemon = try await Daemon.start(
            settings: """
                {"limits":{"max_outbound_bytes":16777216,"messages_per_second":100000,"message_burst":100000}}
                """
        )
        let late = try RawSocket(port: daemon.port, receiveBuffer: 4096, readTimeoutSeconds: 20)
        try late.sendText(Self.join(try daemon.token(user: "late", role: "viewer")))
        _ = try #require(await late.readFrame())
        // The host sends its 2,000 broadcasts in one write and waits for the last answer.
        let host = try RawSocket(port: daemon.port, readTimeoutSeconds: 60)
        try host.sendText(Self.join(try daemon.token(user: "host", role: "host")))
        _ = try #require(await host.readFrame())
        let text = String(repeating: "b", count: 4000)
        try host.sendTexts(
            (1...2000).map {
                #"{"jsonrpc":"2.0","id":\#($0),"method":"broadcast","params":{"info":{"message":"\#($0) \#(text)"}}}"#
            }
        )
        while let frame = await host.readFrame() {
            if frame.opcode == 1, try JSON.parse(frame.payload)["id"] == 2000 { break }
        }
        try late.sendFrame(Array("p0".utf8), opcode: 9)
        try late.sendText(#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#)
        var seen = 0
        var pongs: [String] = []
        var answered = false
        var problem: String?
        while !answered, problem == nil, let frame = await late.readFrame() {
            switch frame.opcode {
            case 10:
                pongs.append(String(decoding: frame.payload, as: UTF8.self))
            case 9:  // roomd's keepalive ping, on a slow run
                try late.sendFrame(frame.payload, opcode: 10)
            case 1:
                guard let message = try? JSON.parse(frame.payload) else {
                    problem = "a text frame that is not JSON"
                    break
                }
                if message["id"] == 7 {
                    answered = true
                } else if message["method"] == "on-broadcast" {
                    seen += 1
                    if message["params"]?["info"]?["message"]?.stringValue != "\(seen) \(text)" {
                        problem = "broadcast \(seen) out of order or cut"
                    }
                    if seen % 100 == 0 { try late.sendFrame(Array("p\(seen / 100)".utf8), opcode: 9) }
                }
            default:
                problem = "opcode \(frame.opcode)"
            }
        }
        let wellFormed = problem == nil
        #expect(wellFormed, "\(problem ?? "") after \(seen) broadcasts and \(pongs.count) pongs")
        #expect(seen == 2000)
        #expect(answered)
        #expect(pongs.first == "p0")
    }

    static func join(_ token: String) -> String {
        #"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#
    }

    @Test func aSenderFasterThanRoomdIsSlowedAndNoReceiverThatReadsIsDropped() async throws {
        // max_outbound_bytes 16 KiB (high watermark 4 KiB). One write of 300
        // broadcasts of 1 KB: lws reads 64 KiB at a time, so without flow
        // control one turn would queue ~60 KB for every receiver and close
        // them all with 4008. One process: over a cluster, receivers on other
        // nodes are paused for by a round trip (ClusterRoutingTests).
        // Flow control stops reading the sender instead: its calls are answered
        // later, every receiver gets every message, nobody is closed.
        let daemon = try await Daemon.start(
            settings: """
                {"limits":{"max_outbound_bytes":16384,"messages_per_second":1000000,"message_burst":1000000}}
                """,
            singleProcess: true
        )
        var receivers: [RoomClient] = []
        for n in 0..<10 { receivers.append(try await daemon.join("r\(n)", as: "viewer").client) }
        let sender = try RawSocket(port: daemon.port, readTimeoutSeconds: 20)
        let token = try daemon.token(user: "fast", role: "host")
        try sender.sendText(#"{"jsonrpc":"2.0","id":0,"method":"join","params":{"token":"\#(token)"}}"#)
        #expect(try JSON.parse(try #require(sender.readFrame()).payload)["result"]?["peer"] != nil)
        for receiver in receivers { _ = try await receiver.next("on-peer-join") }
        let text = String(repeating: "f", count: 1000)
        try sender.sendTexts(
            (1...300).map {
                #"{"jsonrpc":"2.0","id":\#($0),"method":"broadcast","params":{"info":{"message":"\#($0) \#(text)"}}}"#
            }
        )
        var answered: [Int] = []
        while answered.count < 300, let frame = await sender.readFrame() {
            #expect(frame.opcode == 1, "the sender is not closed")
            guard frame.opcode == 1 else { break }
            let message = try JSON.parse(frame.payload)
            if let id = message["id"]?.intValue, message["result"] != nil { answered.append(id) }
        }
        #expect(answered == Array(1...300))
        for receiver in receivers {
            for n in 1...300 {
                let info = try await receiver.next("on-broadcast", timeout: .seconds(20))["info"]
                #expect(info?["message"]?.stringValue == "\(n) \(text)")
                if info?["message"]?.stringValue != "\(n) \(text)" { break }
            }
            #expect(!receiver.isClosed)
        }
        #expect(try await daemon.metricsText().contains("roomd_slow_consumer_closes_total 0\n"))
    }

    @Test func unresponsiveClientIsDroppedAfterTheIdleTimeout() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"limits":{"idle_timeout_s":2},"room":{"reconnect_grace_s":0}}"#
        )
        let (host, _) = try await daemon.join("h", as: "host")
        // A raw socket that joins and then never reads, so it never answers pings.
        let mute = try RawSocket(port: daemon.port)
        let token = try daemon.token(user: "mute", role: "viewer")
        try mute.sendText(#"{"jsonrpc":"2.0","id":1,"method":"join","params":{"token":"\#(token)"}}"#)
        _ = try await host.next("on-peer-join")
        let left = try await host.next("on-peer-leave")
        #expect(left["reason"] == "websocket closed")
        // A client that sends nothing for longer than idle_timeout_s but answers pings stays.
        try await Task.sleep(for: .seconds(3))
        #expect(!host.isClosed)
        _ = try await host.call("ping")
    }

    @Test func sigtermClosesEveryConnection1001AndExitsZero() async throws {
        // A single daemon's shutdown (section 0); a cluster's node drains instead (ClusterDrainTests).
        let daemon = try await Daemon.start(singleProcess: true)
        let (a, _) = try await daemon.join("a", as: "host")
        let b = try await daemon.client()
        // Within the 2-s close window: both clients answer the close at once.
        let (status, _) = await daemon.stop(signal: SIGTERM)
        #expect(status == 0)
        #expect(try await a.closeCode() == 1001)
        #expect(try await b.closeCode() == 1001)
        #expect(daemon.stderr.contains("shutdown complete"))
    }

    @Test func sigintAlsoShutsDownCleanly() async throws {
        let daemon = try await Daemon.start(singleProcess: true)  // a cluster's node drains (ClusterDrainTests)
        let client = try await daemon.client()
        #expect(await daemon.stop(signal: SIGINT).status == 0)
        #expect(try await client.closeCode() == 1001)
    }

    @Test func healthzAndOtherPaths() async throws {
        // One process: a cluster's healthz adds the "cluster" member (ClusterTests).
        let daemon = try await Daemon.start(singleProcess: true)
        let (peer, _) = try await daemon.join("a", as: "host")
        let (status, body) = try await httpGet(port: daemon.port, path: "/healthz")
        #expect(status == 200)
        #expect(try JSON.parse(body) == ["status": "ok", "rooms": 1, "peers": 1])
        #expect(try await httpGet(port: daemon.port, path: "/nope").status == 404)
        await #expect(throws: RoomClientError.self) {
            _ = try await RoomClient.connect(
                to: "ws://127.0.0.1:\(daemon.port)/other",
                defaultTimeout: Daemon.waitTimeout
            )
        }
        withExtendedLifetime(peer) {}
    }
}

/// A minimal HTTP GET over a raw socket (no proxies, no redirects).
func httpGet(port: Int, path: String) async throws -> (status: Int, body: String) {
    let url = URL(string: "http://127.0.0.1:\(port)\(path)")!
    let (data, response) = try await URLSession.shared.data(from: url)
    return ((response as! HTTPURLResponse).statusCode, String(decoding: data, as: UTF8.self))
}
