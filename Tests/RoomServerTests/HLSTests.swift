import Foundation
import RoomClient
import RoomWire
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Section 16: live stream state, timed metadata and the packager endpoint,
/// over real sockets.
@Suite struct HLSTests {
    @Test func startAndStopTellEveryPeer() async throws {
        let stage = try await Stage()
        let before = try await stage.daemon.join("late0", as: "viewer")
        #expect(before.result["room"]?["hls"] == .null, "null before the first start")
        _ = try await stage.settle()
        _ = before.client.drain()
        #expect(try await stage.host.call("hls-start") == [:])
        let session = try #require(before.result["room"]?["session_id"]?.stringValue)
        for client in stage.all + [before.client] {
            let state = try await client.next("on-hls-update")
            #expect(state["running"] == true)
            #expect(state["started_by"]?["peer_id"] == stage.id("host"))
            #expect(state["started_by"]?["role"] == "host")
            #expect(state["variants"]?.arrayValue?.count == 1)
            #expect(state["variants"]?[0]?["url"]?.stringValue == "/hls/room-1/\(session)/index.m3u8")
            #expect(state["variants"]?[0]?["meeting_url"] == .null)
            #expect(state["started_at"]?.intValue == state["variants"]?[0]?["started_at"]?.intValue)
            #expect(state["cues"] == [])
        }
        #expect(try await stage.host.failure("hls-start").code == 40904, "already running")
        #expect(try await stage.guest.failure("hls-stop").code == 40300, "guest lacks hlsStreaming")
        #expect(try await stage.guest.failure("hls-start").code == 40300)
        #expect(
            try await stage.viewer.failure("hls-timed-metadata", ["metadata_objs": [["payload": "x", "duration": 5]]])
                .code == 40300
        )

        // A late joiner sees the running stream in room.hls.
        let late = try await stage.daemon.join("late1", as: "viewer")
        #expect(late.result["room"]?["hls"]?["running"] == true)
        #expect(
            late.result["room"]?["hls"]?["variants"]?[0]?["url"]?.stringValue == "/hls/room-1/\(session)/index.m3u8"
        )

        try await stage.settle()
        _ = late.client.drain()
        _ = before.client.drain()
        #expect(try await stage.host.call("hls-stop") == [:])
        for client in stage.all + [late.client, before.client] {
            let state = try await client.next("on-hls-update")
            #expect(state["running"] == false)
            #expect(state["variants"] == [])
            #expect(state["stopped_by"]?["peer_id"] == stage.id("host"))
        }
        #expect(try await stage.host.failure("hls-stop").code == 40904, "not running")
        #expect(
            try await stage.host.failure("hls-timed-metadata", ["metadata_objs": [["payload": "x", "duration": 5]]])
                .code == 40904
        )
    }

    @Test func restrictedPeersGet40300WhateverTheirRole() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host")
        let (restricted, _) = try await daemon.join("r", as: "host", restrictions: "view_and_polls_only")
        #expect(try await restricted.failure("hls-start").code == 40300)
        _ = try await host.call("hls-start")
        #expect(try await restricted.failure("hls-stop").code == 40300)
        #expect(
            try await restricted.failure("hls-timed-metadata", ["metadata_objs": [["payload": "x", "duration": 5]]])
                .code == 40300
        )
        #expect(try await restricted.errorCode("ping") == nil, "it still may ping")
    }

    @Test func variantsAndThePlaylistURLSetting() async throws {
        let daemon = try await Daemon.start(
            settings: #"{"hls":{"playlist_url":"https://cdn.example.com/live/{room_id}/{session_id}/master.m3u8"}}"#
        )
        let (host, joined) = try await daemon.join("h", as: "host", room: "show")
        let session = try #require(joined["room"]?["session_id"]?.stringValue)
        _ = try await host.call(
            "hls-start",
            [
                "variants": [
                    ["meeting_url": "https://app.example.com/show?view=hls", "metadata": "main"],
                    ["metadata": "backup"],
                ]
            ]
        )
        let state = try await host.next("on-hls-update")
        let url = "https://cdn.example.com/live/show/\(session)/master.m3u8"
        #expect(state["variants"]?.arrayValue?.map { $0["url"]?.stringValue } == [url, url])
        #expect(state["variants"]?[0]?["meeting_url"] == "https://app.example.com/show?view=hls")
        #expect(state["variants"]?[0]?["metadata"] == "main")
        #expect(state["variants"]?[1]?["metadata"] == "backup")
        #expect(state["variants"]?[1]?["meeting_url"] == .null)
        _ = try await host.call("hls-stop")
        #expect(try await host.failure("hls-start", ["variants": []]).code == -32602)
        let nine = JSON.array(Array(repeating: ["metadata": "m"], count: 9))
        #expect(try await host.failure("hls-start", ["variants": nine]).code == -32602)
        #expect(try await host.failure("hls-start", ["variants": ["x"]]).code == -32602)
        #expect(
            try await host.failure("hls-start", ["variants": [["meeting_url": 5]]]).message.contains(
                "variants[0].meeting_url"
            )
        )
        #expect(
            try await host.failure(
                "hls-start",
                ["variants": [["metadata": .string(String(repeating: "m", count: 4097))]]]
            ).code == 41300
        )
    }

    /// On the manual clock (PROTOCOL.md section 25): the two-second cue ends
    /// when the test says, not while a loaded machine is still joining.
    @Test func timedMetadataBecomesCuesThatLateJoinersSee() async throws {
        let stage = try await Stage(daemon: await TestModeTests.manualEverywhere())
        _ = try await stage.host.call("hls-start")
        try await stage.settle()
        let result = try await stage.host.call(
            "hls-timed-metadata",
            [
                "metadata_objs": [
                    ["payload": "question-1", "duration": 2], ["payload": "{\"poll\":\"p1\"}", "duration": 60],
                ]
            ]
        )
        let cues = try #require(result["cues"]?.arrayValue)
        #expect(cues.count == 2)
        #expect(cues.map { $0["payload"]?.stringValue } == ["question-1", "{\"poll\":\"p1\"}"])
        let start = try #require(cues[0]["start_date"]?.intValue)
        #expect(cues[0]["end_date"]?.intValue == start + 2000)
        #expect(cues[1]["end_date"]?.intValue == (cues[1]["start_date"]?.intValue ?? 0) + 60_000)
        #expect(cues[0]["id"] != cues[1]["id"])
        for client in stage.all {
            #expect(try await client.next("on-hls-timed-metadata")["cues"] == result["cues"])
        }
        let late = try await stage.daemon.join("late", as: "viewer")
        #expect(late.result["room"]?["hls"]?["cues"] == result["cues"])
        // The two-second cue ends; later joiners see only the live one.
        try await TestModeTests.advanceAll(stage.daemon, by: 1999)
        let before = try await stage.daemon.join("before", as: "viewer")
        #expect(before.result["room"]?["hls"]?["cues"] == result["cues"], "1 ms before its end")
        try await TestModeTests.advanceAll(stage.daemon, by: 1)
        let later = try await stage.daemon.join("later", as: "viewer")
        #expect(later.result["room"]?["hls"]?["cues"]?.arrayValue == [cues[1]])
        let rest = try await http(
            "GET",
            stage.daemon,
            "/v2/active-rooms/room-1/hls",
            token: try stage.daemon.managementToken()
        )
        #expect(rest.body["cues"]?.arrayValue == [cues[1]])
    }

    @Test func timedMetadataLimits() async throws {
        // A cue's end is one of roomd's timers: on test mode's manual clock, so
        // the 2-s cues cannot end while the test runs under load.
        let daemon = try await TestModeTests.manualEverywhere(settings: #"{"hls":{"max_live_cues":3}}"#)
        let (host, _) = try await daemon.join("h", as: "host")
        func call(_ objects: JSON) async throws -> Int? {
            try await host.errorCode("hls-timed-metadata", ["metadata_objs": objects])
        }
        _ = try await host.call("hls-start")
        #expect(try await host.errorCode("hls-timed-metadata") == -32602, "metadata_objs required")
        #expect(try await call([]) == -32602, "at least one")
        #expect(
            try await call(JSON.array(Array(repeating: ["payload": "p", "duration": 1], count: 21))) == -32602,
            "at most 20"
        )
        #expect(try await call([["payload": "p", "duration": 0]]) == -32602)
        #expect(try await call([["payload": "p", "duration": 3601]]) == -32602)
        #expect(try await call([["payload": "p", "duration": try JSON.parse(Array("1.5".utf8))]]) == -32602)
        #expect(try await call([["payload": "p"]]) == -32602, "duration required")
        #expect(try await call([["duration": 5]]) == -32602, "payload required")
        #expect(try await call([["payload": 5, "duration": 5]]) == -32602)
        #expect(try await call(["p"]) == -32602)
        let big = String(repeating: "é", count: 2049)  // 4098 bytes
        #expect(try await call([["payload": .string(big), "duration": 5]]) == 41300)
        let failure = try await host.failure(
            "hls-timed-metadata",
            ["metadata_objs": [["payload": "ok", "duration": 5], ["payload": .string(big), "duration": 5]]]
        )
        #expect(failure.code == 41300)
        #expect(failure.message.contains("metadata_objs[1].payload"))
        #expect(
            try await call([["payload": .string(String(repeating: "x", count: 4096)), "duration": 3600]]) == nil,
            "4096 bytes and 3600 s are fine"
        )
        #expect(try await call([["payload": "a", "duration": 2], ["payload": "b", "duration": 2]]) == nil)
        #expect(try await call([["payload": "c", "duration": 1]]) == 40907, "max_live_cues 3")
        try await TestModeTests.advanceAll(daemon, by: 1999)
        #expect(try await call([["payload": "c", "duration": 1]]) == 40907, "1 ms before their end they count")
        try await TestModeTests.advanceAll(daemon, by: 1)
        #expect(try await call([["payload": "c", "duration": 1]]) == nil, "expired cues no longer count")
    }

    @Test func theRoomsEndStopsTheStream() async throws {
        let daemon = try await Daemon.start()
        let (host, _) = try await daemon.join("h", as: "host", room: "show")
        _ = try await host.call("hls-start")
        _ = try await host.call("hls-timed-metadata", ["metadata_objs": [["payload": "p", "duration": 60]]])
        _ = try await host.call("end-room", ["reason": "over"])
        let (again, joined) = try await daemon.join("h2", as: "host", room: "show")
        #expect(joined["room"]?["hls"] == .null, "a new session starts without a stream")
        #expect(try await again.failure("hls-stop").code == 40904)
        // The last peer leaving ends the session, and the stream with it.
        _ = try await again.call("hls-start")
        _ = try await again.call("leave")
        let (_, third) = try await daemon.join("h3", as: "host", room: "show")
        #expect(third["room"]?["hls"] == .null)
        #expect(third["room"]?["session_id"] != joined["room"]?["session_id"])
    }

    @Test func restControlsTheStreamAsTheServer() async throws {
        let stage = try await Stage()
        let daemon = stage.daemon
        let admin = try daemon.managementToken()
        let none = try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin)
        #expect(none.status == 200)
        #expect(none.body == .null)
        let started = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/hls/start",
            token: admin,
            body: #"{"variants":[{"metadata":"rest"}]}"#
        )
        #expect(started.status == 200)
        #expect(started.body == [:])
        for client in stage.all {
            let state = try await client.next("on-hls-update")
            #expect(state["started_by"] == ["peer_id": nil, "role": nil, "info": ["name": "server"]])
            #expect(state["variants"]?[0]?["metadata"] == "rest")
        }
        let twice = try await http("POST", daemon, "/v2/active-rooms/room-1/hls/start", token: admin)
        #expect(twice.status == 409)
        #expect(twice.body["code"] == 40904)
        let cue = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/hls/timed-metadata",
            token: admin,
            body: #"{"metadata_objs":[{"payload":"from the backend","duration":30}]}"#
        )
        #expect(cue.status == 200)
        #expect(cue.body["cues"]?[0]?["payload"] == "from the backend")
        #expect(try await stage.viewer.next("on-hls-timed-metadata")["cues"] == cue.body["cues"])
        let bad = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/hls/timed-metadata",
            token: admin,
            body: #"{"metadata_objs":[{"payload":"x","duration":0}]}"#
        )
        #expect(bad.status == 400)
        #expect(bad.body["code"] == -32602)
        let large = try await http(
            "POST",
            daemon,
            "/v2/active-rooms/room-1/hls/timed-metadata",
            token: admin,
            body: #"{"metadata_objs":[{"payload":"\#(String(repeating: "x", count: 4097))","duration":5}]}"#
        )
        #expect(large.status == 413)
        let state = try await http("GET", daemon, "/v2/active-rooms/room-1/hls", token: admin)
        #expect(state.body["running"] == true)
        #expect(state.body["cues"] == cue.body["cues"])
        let room = try await http("GET", daemon, "/v2/active-rooms/room-1", token: admin)
        #expect(room.body["room"]?["hls"]?["running"] == true, "the Room object carries hls")
        #expect(try await http("POST", daemon, "/v2/active-rooms/room-1/hls/stop", token: admin).status == 200)
        #expect(try await stage.guest.next("on-hls-update")["running"] == false)
        let stopped = try await http("POST", daemon, "/v2/active-rooms/room-1/hls/stop", token: admin)
        #expect(stopped.status == 409)
        #expect(stopped.body["code"] == 40904)
        let nowhere = try await http("POST", daemon, "/v2/active-rooms/nowhere/hls/start", token: admin)
        #expect(nowhere.status == 404)
        #expect(nowhere.body["code"] == 40001)
        #expect(try await http("GET", daemon, "/v2/active-rooms/room-1/hls").status == 401)
    }

    /// On the manual clock: the cues' times are exact, and a cue ends when the clock passes it.
    @Test func theDateRangeEndpointPrintsOneRFC8216TagPerLiveCue() async throws {
        let daemon = try await TestModeTests.manualEverywhere()
        let admin = try daemon.managementToken()
        let (host, _) = try await daemon.join("h", as: "host")
        _ = try await host.call("hls-start")
        let empty = try await http("GET", daemon, "/v2/active-rooms/room-1/hls/daterange", token: admin)
        #expect(empty.status == 200)
        #expect(empty.body == "", "no cues, no lines")
        let payloads = ["plain", "quotes \" and, commas = and\nnewlines", "ünïcødé ✓ 🎉", ""]
        var cues: [JSON] = []
        for (index, payload) in payloads.enumerated() {
            let result = try await host.call(
                "hls-timed-metadata",
                ["metadata_objs": [["payload": .string(payload), "duration": .int(120 + index)]]]
            )
            cues += result["cues"]?.arrayValue ?? []
            try await TestModeTests.advanceAll(daemon, by: 5)
        }
        let (status, text, contentType) = try await httpText(
            "GET",
            daemon,
            "/v2/active-rooms/room-1/hls/daterange",
            token: admin
        )
        #expect(status == 200)
        #expect(contentType?.hasPrefix("text/plain") == true)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.last == "", "every tag ends with a newline")
        let tags = lines.dropLast()
        #expect(tags.count == payloads.count, "oldest first, one per live cue")
        for (tag, cue) in zip(tags, cues) {
            #expect(tag.hasPrefix("#EXT-X-DATERANGE:"))
            let attributes = try #require(
                HLSAttributeList.parse(String(tag.dropFirst("#EXT-X-DATERANGE:".count))),
                "\(tag)"
            )
            #expect(attributes.map(\.name) == ["ID", "START-DATE", "DURATION", "X-ROOMD-PAYLOAD"])
            let values = Dictionary(uniqueKeysWithValues: attributes.map { ($0.name, $0.value) })
            #expect(values["ID"] == .quoted(cue["id"]!.stringValue!))
            guard case .quoted(let start)? = values["START-DATE"], case .decimal(let duration)? = values["DURATION"],
                case .quoted(let encoded)? = values["X-ROOMD-PAYLOAD"]
            else {
                Issue.record("wrong attribute types in \(tag)")
                continue
            }
            #expect(
                start.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z/) != nil,
                "ISO 8601 UTC with ms: \(start)"
            )
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let date = try #require(formatter.date(from: start))
            #expect(Int64((date.timeIntervalSince1970 * 1000).rounded()) == Int64(cue["start_date"]!.intValue!))
            #expect(duration.wholeMatch(of: /\d+\.\d{3}/) != nil, "3 decimals: \(duration)")
            let millis = cue["end_date"]!.intValue! - cue["start_date"]!.intValue!
            #expect(Int((Double(duration)! * 1000).rounded()) == millis)
            let decoded = try #require(Data(base64Encoded: encoded))
            #expect(String(decoding: decoded, as: UTF8.self) == cue["payload"]!.stringValue!)
        }
        // A one-second cue ends and leaves the list; the others stay.
        let short = try await host.call("hls-timed-metadata", ["metadata_objs": [["payload": "brief", "duration": 1]]])
        try await TestModeTests.advanceAll(daemon, by: 1000)
        let after = try await httpText("GET", daemon, "/v2/active-rooms/room-1/hls/daterange", token: admin)
        #expect(after.text.split(separator: "\n").count == payloads.count)
        #expect(!after.text.contains(short["cues"]![0]!["id"]!.stringValue!))
        #expect(try await http("GET", daemon, "/v2/active-rooms/nowhere/hls/daterange", token: admin).status == 404)
    }
}

/// RFC 8216 §4.2 attribute lists, parsed as an HLS client does:
/// `NAME=VALUE` pairs separated by commas; names `[A-Z0-9-]+`; values are
/// quoted strings (no `"`, CR or LF inside), hexadecimal sequences, decimal
/// numbers, or enumerated strings (no quotes, commas or whitespace).
enum HLSAttributeList {
    enum Value: Equatable {
        case quoted(String)
        case decimal(String)
        case hex(String)
        case enumerated(String)
    }

    static func parse(_ text: String) -> [(name: String, value: Value)]? {
        var result: [(name: String, value: Value)] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let equals = rest.firstIndex(of: "=") else { return nil }
            let name = String(rest[..<equals])
            guard !name.isEmpty, name.allSatisfy({ $0.isUppercase || $0.isNumber || $0 == "-" }),
                name.allSatisfy(\.isASCII)
            else { return nil }
            rest = rest[rest.index(after: equals)...]
            let value: Value
            if rest.first == "\"" {
                rest = rest.dropFirst()
                guard let close = rest.firstIndex(of: "\"") else { return nil }
                let inner = String(rest[..<close])
                if inner.contains("\n") || inner.contains("\r") { return nil }
                value = .quoted(inner)
                rest = rest[rest.index(after: close)...]
            } else {
                let raw = String(rest.prefix { $0 != "," })
                rest = rest.dropFirst(raw.count)
                if raw.isEmpty || raw.contains(where: { $0 == "\"" || $0.isWhitespace }) { return nil }
                if raw.hasPrefix("0x") || raw.hasPrefix("0X") {
                    value = .hex(raw)
                } else if raw.wholeMatch(of: /-?\d+(\.\d+)?/) != nil {
                    value = .decimal(raw)
                } else {
                    value = .enumerated(raw)
                }
            }
            result.append((name, value))
            if rest.first == "," {
                rest = rest.dropFirst()
                if rest.isEmpty { return nil }
            } else if !rest.isEmpty {
                return nil
            }
        }
        return result
    }
}

/// A plain-text HTTP exchange: (status, body text, Content-Type).
func httpText(
    _ method: String,
    _ daemon: Daemon,
    _ path: String,
    token: String? = nil
) async throws
    -> (status: Int, text: String, contentType: String?)
{
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.port)\(path)")!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    let (data, response) = try await URLSession.shared.data(for: request)
    let http = response as! HTTPURLResponse
    return (http.statusCode, String(decoding: data, as: UTF8.self), http.value(forHTTPHeaderField: "Content-Type"))
}
