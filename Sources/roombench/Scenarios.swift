import Foundation
import RoomWire
import RoomdTesting

extension Bench {
    // MARK: - (a) join storm

    /// N connections, then N `join`s to one room fired at once. In raw mode
    /// the WebSocket handshakes are the storm (there is no join).
    func joinStorm(
        peers: Int,
        role: String,
        settleQuiet: Double = 0.5,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let conns = loop.makeConns(peers)
        loop.watchedMethod = "room-state"  // section 12: counted (and their bytes) among the pushes
        let tokens = try mintTokens((0..<peers).map { Identity(room: "storm", user: "storm-\($0)", role: role) })
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        loop.resetCounters()
        let (opened, _, connectSeconds) = loop.connectAll(conns, to: endpoint, timeout: connectTimeout)
        var record = baseRecord("join-storm")
        record.set("peers", peers)
        record.set("connected", opened)
        record.set("connect_s", connectSeconds, digits: 3)
        record.set("connects_per_s", Double(opened) / max(connectSeconds, 1e-9), digits: 0)
        var line: String
        if raw {
            record.set("joined", opened)
            record.set("join_s", connectSeconds, digits: 3)
            record.set("joins_per_s", Double(opened) / max(connectSeconds, 1e-9), digits: 0)
            line =
                "join-storm  \(label): \(Fmt.int(opened))/\(Fmt.int(peers)) WebSocket handshakes in "
                + String(format: "%.2f s", connectSeconds)
                + " = \(Fmt.int(Double(opened) / max(connectSeconds, 1e-9)))/s (raw: no join)"
        } else {
            let join = joinAll(conns, tokens: tokens, timeout: joinTimeout)
            let server1 = serverSample()
            let client1 = ProcStats.selfSample()
            // The pushes the joins caused (on-peer-join...) may still be on their way.
            let settled = loop.runUntilQuiet(quiet: settleQuiet, timeout: max(10, 3 * settleQuiet))
            record.set("settled", settled)
            record.set("room_state_pushes", loop.counters.watched)
            record.set("room_state_bytes", loop.counters.watchedBytes)
            record.set(
                "room_state_bytes_per_peer",
                Double(loop.counters.watchedBytes) / Double(max(join.joined, 1)),
                digits: 1
            )
            record.set(
                "bytes_received_per_peer",
                Double(loop.counters.bytesIn) / Double(max(join.joined, 1)),
                digits: 1
            )
            record.set("joined", join.joined)
            record.set("join_failed", join.failed)
            record.set("join_s", join.seconds, digits: 3)
            record.set("joins_per_s", join.perSecond, digits: 0)
            record.setLatency(join.latency, prefix: "join_")
            record.set("join_errors", counts: join.errorCodes)
            record.set("pushes_received", loop.counters.otherFrames)
            record.set("bytes_received", loop.counters.bytesIn)
            line =
                "join-storm  \(label): \(Fmt.int(join.joined))/\(Fmt.int(peers)) joined in "
                + String(format: "%.2f s", join.seconds) + " = \(Fmt.int(join.perSecond)) joins/s"
                + "  join latency p50 \(Fmt.ms(Double(join.latency.value(atQuantile: 0.5)) / 1000))"
                + " p99 \(Fmt.ms(Double(join.latency.value(atQuantile: 0.99)) / 1000))"
                + "  (connect \(Fmt.int(Double(opened) / max(connectSeconds, 1e-9)))/s; "
                + "\(Fmt.int(loop.counters.otherFrames)) pushes received; errors \(describe(join.errorCodes)))"
            addCommon(&record, server: server0, server1, client: client0, client1)
            if let settledSample = serverSample() {  // after the pushes went out
                record.set("server_rss_kib", settledSample.rssKiB)
                record.set("server_hwm_kib", settledSample.hwmKiB)
            }
        }
        if raw { addCommon(&record, server: server0, serverSample(), client: client0, ProcStats.selfSample()) }
        try emit(record, line: line)
    }

    // MARK: - (b) fan-out

    /// One room: `receivers` viewers and one sender (host) broadcasting at
    /// each rate of `rates` for `duration` seconds. Stops after a step that
    /// is clearly overloaded.
    func fanout(
        receivers count: Int,
        rates: [Int],
        duration: Double,
        drain: Double,
        messageBytes: Int,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let receivers = loop.makeConns(count)
        let sender = loop.makeConns(1)[0]
        let all = receivers + [sender]
        // Receivers round-robin over every --url (a cluster's nodes), the sender on the first.
        let endpoints = self.endpoints
        let first = receivers[0].index
        let (opened, _, connectSeconds) = loop.connectAll(
            all,
            to: endpoint,
            timeout: connectTimeout,
            endpointFor: { $0 === sender ? endpoints[0] : endpoints[($0.index - first) % endpoints.count] }
        )
        guard sender.phase == .open, opened > 1 else {
            throw BenchError("fan-out: only \(opened) of \(all.count) connections opened (\(loop.lastConnectError))")
        }
        var setup = String(format: "connected %d in %.2f s", opened, connectSeconds)
        if endpoints.count > 1 { setup += " over \(endpoints.count) servers" }
        if options.nats {
            let subscribed = try natsSubscribe(receivers: receivers, sender: sender, timeout: joinTimeout)
            setup += ", \(subscribed) subscribed"
        } else if !raw {
            var identities = (0..<count).map { Identity(room: "fanout", user: "viewer-\($0)", role: "viewer") }
            identities.append(Identity(room: "fanout", user: "sender", role: "host"))
            let tokens = try mintTokens(identities)
            let join = joinAll(receivers, tokens: Array(tokens.prefix(count)), timeout: joinTimeout)
            let senderJoin = joinAll([sender], tokens: [tokens[count]], timeout: 10)
            guard senderJoin.joined == 1 else { throw BenchError("fan-out: the sender could not join") }
            setup += String(format: ", %d joined in %.2f s", join.joined + 1, join.seconds)
        }
        loop.runUntilQuiet(quiet: 0.5, timeout: 30)
        print("fanout      \(label): \(setup)")

        var stepNumber = 0
        for rate in rates {
            stepNumber += 1
            let live = receivers.filter { $0.phase == .open && (raw || $0.joined) }.count
            guard live > 0, sender.phase == .open else { break }
            let result = runFanoutStep(
                sender: sender,
                receivers: receivers,
                rate: rate,
                duration: duration,
                drain: drain,
                messageBytes: messageBytes,
                step: stepNumber
            )
            try emit(result.record, line: result.line)
            if result.overloaded { break }
        }
    }

    private struct StepResult {
        var record: Record
        var line: String
        var overloaded: Bool
    }

    /// NATS: every connection sends `CONNECT`, receivers `SUB` the subject,
    /// then `PING`; the `PONG` means the subscription is in place. Returns
    /// the receivers whose PONG came.
    private func natsSubscribe(receivers: [BenchConn], sender: BenchConn, timeout: Double) throws -> Int {
        final class Box {
            var ponged = Set<Int>()
            var errors = 0
        }
        let box = Box()
        loop.onResponse = { conn, _, error in
            if error != nil { box.errors += 1 } else { box.ponged.insert(conn.index) }
        }
        defer { loop.onResponse = nil }
        let connect =
            #"CONNECT {"verbose":false,"pedantic":false,"lang":"swift","version":"roombench","protocol":1}"# + "\r\n"
        var asked = 0
        for conn in receivers + [sender] where conn.phase == .open {
            let sub = conn === sender ? "" : "SUB \(loop.natsSubject) \(conn.index + 1)\r\n"
            loop.send(conn, connect + sub + "PING\r\n")
            asked += 1
        }
        loop.run(until: monoNanos() + UInt64(timeout * 1e9)) { box.ponged.count + box.errors < asked }
        guard box.ponged.contains(sender.index) else {
            throw BenchError("fan-out: nats-server did not answer the sender's PING (\(loop.natsLastError))")
        }
        return box.ponged.count - 1
    }

    private func runFanoutStep(
        sender: BenchConn,
        receivers: [BenchConn],
        rate: Int,
        duration: Double,
        drain: Double,
        messageBytes: Int,
        step: Int
    ) -> StepResult {
        loop.step = step % 100
        loop.resetCounters()
        let box = CallCounts()
        let total = Int(Double(rate) * duration)
        let varz0 = options.varz.flatMap(NatsVarz.read)
        let nodes0 = options.serverPIDs.count > 1 ? options.serverPIDs.map { ProcStats.sample(pid: $0) } : []
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        let receiversAtStart = receivers.filter { $0.phase == .open }.count
        let closesBefore = loop.closeCodes
        let start = monoNanos()
        let raw = self.raw
        let loop = self.loop
        loop.onResponse = { conn, _, error in
            guard conn === sender else { return }
            box.answered(error: error)
        }
        loop.onTick = { now in
            let due = min(total, Int(Double(now - start) / 1e9 * Double(rate)))
            while box.sent < due {
                let body = Marker.body(micros: monoNanos() / 1000, step: step, sender: sender.index, size: messageBytes)
                loop.sendMessage(body, from: sender, raw: raw)
                box.sent += 1
            }
        }
        loop.run(until: start + UInt64((duration + 5) * 1e9)) { box.sent < total && sender.phase == .open }
        loop.onTick = nil
        let sendEnd = monoNanos()

        // Drain: until everything expected arrived, nothing moved for 1 s, or `drain` s passed.
        func live() -> Int { receivers.filter { $0.phase == .open }.count }
        // Receivers dropped meanwhile (e.g. 4008 slow consumer) count as loss.
        func expected() -> Int { (raw ? box.sent : box.acked) * receiversAtStart }
        var lastCount = loop.counters.deliveries
        var lastMove = monoNanos()
        loop.run(until: sendEnd + UInt64(drain * 1e9)) {
            let now = monoNanos()
            if loop.counters.deliveries != lastCount {
                lastCount = loop.counters.deliveries
                lastMove = now
            }
            let answered = raw || box.acked + box.rejected >= box.sent
            return !(answered && loop.counters.deliveries >= expected()) && now - lastMove < 1_000_000_000
        }
        loop.onResponse = nil
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        let varz1 = options.varz.flatMap(NatsVarz.read)
        let nodes1 = options.serverPIDs.count > 1 ? options.serverPIDs.map { ProcStats.sample(pid: $0) } : []

        let c = loop.counters
        let expectedCount = expected()
        let loss = max(0, expectedCount - c.deliveries)
        let window = Double(max(c.lastDeliveryNs, sendEnd) - start) / 1e9
        let deliveredPerSecond = Double(c.deliveries) / max(window, 1e-9)
        let offered = Double(rate * receiversAtStart)
        let p99 = Double(loop.latency.value(atQuantile: 0.99)) / 1000

        var record = baseRecord("fanout")
        record.set("rate", rate)
        record.set("receivers", receiversAtStart)
        record.set("receivers_open_after", live())
        var closed: [Int: Int] = [:]
        for (code, n) in loop.closeCodes where n > closesBefore[code, default: 0] {
            closed[code] = n - closesBefore[code, default: 0]
        }
        record.set("receivers_closed", receiversAtStart - live())
        record.set("step_close_codes", counts: closed)
        record.set("protocol", options.wire.rawValue)
        record.set("servers", endpoints.count)
        if let server0 { record.set("server_rss_start_kib", server0.rssKiB) }
        if !nodes0.isEmpty {
            let cpu = zip(nodes0, nodes1).map { pair -> JSON in
                guard let a = pair.0, let b = pair.1 else { return .null }
                return .number(Record.format(b.cpuPercent(since: a), 1))
            }
            record["node_cpu_pct"] = .array(cpu)
        }
        if let varz0, let varz1 {
            record.set("bus_in_msgs", varz1.inMsgs - varz0.inMsgs)
            record.set("bus_out_msgs", varz1.outMsgs - varz0.outMsgs)
        }
        record.set("duration_s", duration, digits: 1)
        record.set("message_bytes", messageBytes)
        record.set(calls: box, raw: raw)
        record.set("expected", expectedCount)
        record.set("delivered", c.deliveries)
        record.set("loss", loss)
        record.set("stale", c.stale)
        record.set("echoes", c.echoes)
        record.set("offered_per_s", offered, digits: 0)
        record.set("delivered_per_s", deliveredPerSecond, digits: 0)
        record.set("window_s", window, digits: 3)
        record.set("bytes_per_s", Double(c.bytesIn) / max(window, 1e-9), digits: 0)
        record.set("client_reads", c.reads)
        record.set("client_bytes_per_read", Double(c.bytesIn) / Double(max(c.reads, 1)), digits: 0)
        record.setLatency(loop.latency)
        addCommon(&record, server: server0, server1, client: client0, client1)

        let serverCPU = (server0 != nil && server1 != nil) ? Fmt.pct(server1!.cpuPercent(since: server0!)) : "?"
        let line =
            "fanout      \(label): \(String(format: "%5d", rate)) msg/s x \(receiversAtStart) = offered \(Fmt.int(offered))/s"
            + "  delivered \(Fmt.int(deliveredPerSecond))/s"
            + "  p50 \(Fmt.ms(Double(loop.latency.value(atQuantile: 0.5)) / 1000)) p99 \(Fmt.ms(p99))"
            + " max \(Fmt.ms(Double(loop.latency.max) / 1000))"
            + "  loss \(Fmt.int(loss))  server CPU \(serverCPU) client CPU \(Fmt.pct(client1.cpuPercent(since: client0)))"
            + (box.rejected > 0 ? "  rejected \(describe(box.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
            + (loop.natsLastError.isEmpty ? "" : "  nats: \(loop.natsLastError)")
        let overloaded =
            deliveredPerSecond < 0.8 * offered || Double(loss) > 0.05 * Double(max(expectedCount, 1))
            || p99 > 2000
        return StepResult(record: record, line: line, overloaded: overloaded)
    }

    // MARK: - (c) many rooms

    /// `rooms` rooms of `perRoom` peers; every peer sends `rate` messages/s
    /// (evenly spread) for `duration` seconds; each message goes to the
    /// other peers of its room. In raw mode each room is a mirror instance
    /// (`?mirror=NAME`).
    func manyRooms(
        rooms: Int,
        perRoom: Int,
        rate: Double,
        duration: Double,
        drain: Double,
        messageBytes: Int,
        role: String,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let count = rooms * perRoom
        let conns = loop.makeConns(count)
        for conn in conns { conn.room = (conn.index - conns[0].index) / perRoom }
        let (opened, _, connectSeconds) = loop.connectAll(
            conns,
            to: endpoint,
            timeout: connectTimeout,
            path: raw ? { "\(self.endpoint.path)?mirror=room-\($0.room)" } : nil
        )
        var setup = String(format: "connected %d in %.2f s", opened, connectSeconds)
        if !raw {
            let tokens = try mintTokens(
                conns.map { Identity(room: "room-\($0.room)", user: "u\($0.index)", role: role) }
            )
            let join = joinAll(conns, tokens: tokens, timeout: joinTimeout)
            setup += String(format: ", %d joined in %.2f s", join.joined, join.seconds)
        }
        loop.runUntilQuiet(quiet: 0.5, timeout: 30)
        print("rooms       \(label): \(setup)")

        loop.step = 1
        loop.resetCounters()
        /// Also the deliveries the sent messages should make.
        final class RoomCalls: CallCounts { var expected = 0 }
        let box = RoomCalls()
        let total = Int(Double(count) * rate * duration)
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        let raw = self.raw
        let loop = self.loop
        var roomSize = [Int](repeating: 0, count: rooms)
        for conn in conns where conn.phase == .open && (raw || conn.joined) { roomSize[conn.room] += 1 }
        let start = monoNanos()
        loop.onResponse = { _, _, error in
            box.answered(error: error)
        }
        // Message j leaves connection j mod N at start + j / (N * rate).
        loop.onTick = { now in
            let due = min(total, Int(Double(now - start) / 1e9 * Double(count) * rate))
            while box.sent < due {
                let conn = conns[box.sent % count]
                box.sent += 1
                guard conn.phase == .open, raw || conn.joined else { continue }
                let body = Marker.body(micros: monoNanos() / 1000, step: 1, sender: conn.index, size: messageBytes)
                loop.sendMessage(body, from: conn, raw: raw)
                box.expected += roomSize[conn.room] - 1
            }
        }
        loop.run(until: start + UInt64((duration + 5) * 1e9)) { box.sent < total }
        loop.onTick = nil
        let sendEnd = monoNanos()
        var lastCount = loop.counters.deliveries
        var lastMove = monoNanos()
        loop.run(until: sendEnd + UInt64(drain * 1e9)) {
            let now = monoNanos()
            if loop.counters.deliveries != lastCount {
                lastCount = loop.counters.deliveries
                lastMove = now
            }
            return loop.counters.deliveries < box.expected && now - lastMove < 1_000_000_000
        }
        loop.onResponse = nil
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()
        let c = loop.counters
        // Rejected broadcasts (roomd) reach nobody: do not expect them.
        let expected = raw ? box.expected : box.expected - box.rejected * max(perRoom - 1, 0)
        let loss = max(0, expected - c.deliveries)
        let window = Double(max(c.lastDeliveryNs, sendEnd) - start) / 1e9

        var record = baseRecord("rooms")
        record.set("rooms", rooms)
        record.set("peers_per_room", perRoom)
        record.set("peers", opened)
        record.set("rate_per_peer", rate, digits: 2)
        record.set("duration_s", duration, digits: 1)
        record.set("message_bytes", messageBytes)
        record.set(calls: box, raw: raw)
        record.set("expected", expected)
        record.set("delivered", c.deliveries)
        record.set("loss", loss)
        record.set("echoes", c.echoes)
        record.set("messages_per_s", Double(box.sent) / duration, digits: 0)
        record.set("delivered_per_s", Double(c.deliveries) / max(window, 1e-9), digits: 0)
        record.setLatency(loop.latency)
        addCommon(&record, server: server0, server1, client: client0, client1)
        let serverCPU = (server0 != nil && server1 != nil) ? Fmt.pct(server1!.cpuPercent(since: server0!)) : "?"
        let line =
            "rooms       \(label): \(rooms) rooms x \(perRoom) peers at \(rate) msg/s each"
            + " = \(Fmt.int(Double(box.sent) / duration)) msg/s, delivered \(Fmt.int(Double(c.deliveries) / max(window, 1e-9)))/s"
            + "  p50 \(Fmt.ms(Double(loop.latency.value(atQuantile: 0.5)) / 1000))"
            + " p99 \(Fmt.ms(Double(loop.latency.value(atQuantile: 0.99)) / 1000))"
            + " max \(Fmt.ms(Double(loop.latency.max) / 1000))"
            + "  loss \(Fmt.int(loss))  server CPU \(serverCPU) client CPU \(Fmt.pct(client1.cpuPercent(since: client0)))"
            + (box.rejected > 0 ? "  rejected \(describe(box.errors))" : "")
            + (loop.closeCodes.isEmpty ? "" : "  closes \(describe(loop.closeCodes))")
        try emit(record, line: line)
    }

    // MARK: - (d) idle

    /// `peers` joined peers in one room, then `window` seconds of silence:
    /// the server's RSS and CPU.
    func idle(
        peers: Int,
        role: String,
        window: Double,
        probeJoins: Int = 0,
        connectTimeout: Double,
        joinTimeout: Double
    ) throws {
        let before = serverSample()
        let conns = loop.makeConns(peers)
        let tokens = try mintTokens((0..<peers).map { Identity(room: "idle", user: "idle-\($0)", role: role) })
        let (opened, _, connectSeconds) = loop.connectAll(conns, to: endpoint, timeout: connectTimeout)
        var joined = opened
        var joinSeconds = 0.0
        var joinFailed = 0
        if !raw {
            let join = joinAll(conns, tokens: tokens, timeout: joinTimeout)
            joined = join.joined
            joinSeconds = join.seconds
            joinFailed = join.failed
        }
        let settled = loop.runUntilQuiet(quiet: 1.0, timeout: 30)
        let server0 = serverSample()
        let client0 = ProcStats.selfSample()
        loop.run(for: window)
        let server1 = serverSample()
        let client1 = ProcStats.selfSample()

        var record = baseRecord("idle")
        record.set("peers", peers)
        record.set("connected", opened)
        record.set("joined", joined)
        record.set("join_failed", joinFailed)
        record.set("connect_s", connectSeconds, digits: 3)
        record.set("join_s", joinSeconds, digits: 3)
        record.set("settled", settled)
        record.set("window_s", window, digits: 1)
        if let before { record.set("server_rss_before_kib", before.rssKiB) }
        addCommon(&record, server: server0, server1, client: client0, client1)
        var line = "idle        \(label): \(Fmt.int(joined))/\(Fmt.int(peers)) \(raw ? "connected" : "joined")"
        if let before, let server1 {
            let perPeer = Double(server1.rssKiB - before.rssKiB) * 1024 / Double(max(joined, 1))
            record.set("rss_per_peer_bytes", perPeer, digits: 0)
            line +=
                "  server RSS \(Fmt.mib(kib: server1.rssKiB)) (before \(Fmt.mib(kib: before.rssKiB)),"
                + " \(Fmt.int(perPeer)) B/peer; peak \(Fmt.mib(kib: server1.hwmKiB)))"
                + "  idle CPU \(Fmt.pct(server0.map { server1.cpuPercent(since: $0) } ?? 0))"
        }
        if !raw { line += String(format: "  (join phase %.2f s)", joinSeconds) }
        if !raw, probeJoins > 0 {
            // One more peer at a time into the room of `peers`: the join call's answer time.
            let extra = loop.makeConns(probeJoins)
            let extraTokens = try mintTokens(
                extra.map { Identity(room: "idle", user: "probe-\($0.index)", role: role) }
            )
            _ = loop.connectAll(extra, to: endpoint, timeout: connectTimeout)
            var probe = Histogram()
            var failed = 0
            for (conn, token) in zip(extra, extraTokens) {
                let one = joinAll([conn], tokens: [token], timeout: 10)
                if one.joined == 1 { probe.merge(one.latency) } else { failed += 1 }
                loop.runUntilQuiet(quiet: 0.02, timeout: 1)  // the pushes the join caused, before the next
            }
            record.setLatency(probe, prefix: "probe_join_")
            record.set("probe_joins", probeJoins)
            record.set("probe_join_failed", failed)
            line +=
                "  one more join: p50 \(Fmt.ms(Double(probe.value(atQuantile: 0.5)) / 1000))"
                + " p99 \(Fmt.ms(Double(probe.value(atQuantile: 0.99)) / 1000)) (\(probeJoins) joins\(failed > 0 ? ", \(failed) failed" : ""))"
        }
        try emit(record, line: line)
    }
}

/// nats-server's message counters from its monitoring endpoint (`/varz`), read with curl.
struct NatsVarz {
    var inMsgs: Int
    var outMsgs: Int

    static func read(_ base: String) -> NatsVarz? {
        // RoomdTesting's runTool, not Foundation's Process: its `run` can fault
        // while this process holds thousands of sockets (ChildProcess.swift).
        guard let run = try? runTool("/usr/bin/curl", ["-fsS", "--max-time", "5", base + "/varz"], timeout: 10),
            run.status == 0, let json = try? JSON.parse(Array(run.stdout)),
            let inMsgs = json["in_msgs"]?.intValue, let outMsgs = json["out_msgs"]?.intValue
        else { return nil }
        return NatsVarz(inMsgs: inMsgs, outMsgs: outMsgs)
    }
}
