import Testing

@testable import RoomConfig

/// `config/roles.json` of this repository (three levels above this file).
private let shippedTemplatePath =
    #filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")
    + "/config/roles.json"

private func decode(_ json: String) throws(TemplateError) -> (template: RoleTemplate, warnings: [String]) {
    try RoleTemplate.decode(Array(json.utf8))
}

/// The error `decode` reports as `PATH: PROBLEM`, or nil if the template is accepted.
private func failure(_ json: String) -> String? {
    do {
        _ = try decode(json)
        return nil
    } catch {
        return error.description
    }
}

/// A template with roles `host` and `guest`; `guest` gets `guestBody`, and `extra` is added at the top level.
private func template(guest guestBody: String = "{}", extra: String = "") -> String {
    #"{"roles":{"host":{},"guest":\#(guestBody)}\#(extra.isEmpty ? "" : ",")\#(extra)}"#
}

/// Only the `settings.<section>` object given.
private func settings(_ section: String, _ body: String) -> String {
    template(extra: #""settings":{"\#(section)":\#(body)}"#)
}

@Suite struct TemplateTests {
    // MARK: The shipped template

    @Test func shippedTemplateDecodesWithItsFourRoles() throws {
        let (t, warnings) = try RoleTemplate.load(path: shippedTemplatePath)
        #expect(warnings == [])
        #expect(t.name == "guest-call-in")
        #expect(t.roleNames == ["host", "guest", "moderator", "viewer"])

        let host = try #require(t.role("host"))
        #expect(host.priority == 1)
        #expect(host.permissions == .all)
        #expect(host.publishParams.allowed == [.audio, .video, .screen])
        #expect(host.subscribeParams.subscribeToRoles == ["host", "guest"])

        let guest = try #require(t.role("guest"))
        #expect(guest.priority == 2)
        #expect(guest.publishParams.allowed == [.audio, .video])
        #expect(!guest.publishParams.allows(.screen))
        #expect(guest.permissions == Permissions(pollRead: true))
        #expect(guest.subscribes(to: "host") && guest.subscribes(to: "guest") && !guest.subscribes(to: "viewer"))

        let moderator = try #require(t.role("moderator"))
        #expect(moderator.priority == 3)
        #expect(!moderator.publishParams.canPublish)
        #expect(
            moderator.permissions
                == Permissions(
                    removeOthers: true,
                    mute: true,
                    unmute: true,
                    changeRole: true,
                    pollRead: true,
                    pollWrite: true,
                    moderateChat: true
                )
        )
        #expect(moderator.subscribeParams.subscribeToRoles == ["host", "guest", "moderator"])

        let viewer = try #require(t.role("viewer"))
        #expect(viewer.priority == 4)
        #expect(!viewer.publishParams.canPublish)
        #expect(viewer.permissions == Permissions(pollRead: true))
        #expect(viewer.subscribeParams.subscribeToRoles == ["host", "guest"])

        for role in t.roles.values {
            #expect(role.maxPeerCount == 0)
            #expect(role.publishParams.audio == AudioParams())
            #expect(role.publishParams.video == .defaultVideo)
            #expect(role.publishParams.screen == .defaultScreen)
            #expect(role.subscribeParams.maxSubsBitRate == 3200)
        }
        // The shipped settings spell out the defaults.
        #expect(t.settings == Settings())
    }

    // MARK: Defaults

    @Test func defaultsApplyWhenFieldsAreAbsent() throws {
        let (t, warnings) = try decode(#"{"roles":{"solo":{}}}"#)
        #expect(warnings == [])
        #expect(t.name == "roomd")
        #expect(t.roleNames == ["solo"])
        let role = try #require(t.role("solo"))
        #expect(role == Role(name: "solo"))
        #expect(role.priority == 1)
        #expect(role.maxPeerCount == 0)
        #expect(role.publishParams.allowed == [])
        #expect(role.publishParams.audio == AudioParams(bitRate: 32, codec: "opus"))
        #expect(
            role.publishParams.video == VideoParams(bitRate: 300, codec: "vp8", frameRate: 30, width: 480, height: 360)
        )
        #expect(
            role.publishParams.screen
                == VideoParams(bitRate: 1000, codec: "vp8", frameRate: 10, width: 1920, height: 1080)
        )
        #expect(role.subscribeParams == SubscribeParams(subscribeToRoles: [], maxSubsBitRate: 3200))
        // Absent permissions are false, but updateOwnMetadata (section 27) is true.
        #expect(Permissions.names.allSatisfy { role.permissions[$0] == ($0 == "updateOwnMetadata") })

        let s = t.settings
        #expect(s == Settings())
        #expect(
            s.room
                == RoomSettings(
                    autoCreate: true,
                    predefined: [],
                    maxPeers: 0,
                    reconnectGraceS: 20,
                    largeRoomThreshold: 1000,
                    roomStateIntervalMs: 2000
                )
        )
        #expect(s.room.resumeBufferBytes == 1_048_576, "1 MiB (1.3, section 29)")
        #expect(s.activeSpeakers == ActiveSpeakerSettings(intervalMs: 1000, threshold: 35, maxSpeakers: 5))
        #expect(s.roleChange.requestTTLS == 60)
        #expect(
            s.limits
                == LimitSettings(
                    maxMessageBytes: 65536,
                    idleTimeoutS: 60,
                    maxOutboundBytes: 1_048_576,
                    maxTracksPerPeer: 8,
                    maxChatBytes: 4096,
                    messagesPerSecond: 100,
                    messageBurst: 200,
                    maxNameBytes: 64,
                    maxMetadataBytes: 4096
                )
        )
    }

    @Test func partialObjectsKeepTheOtherDefaults() throws {
        let (t, _) = try decode(
            #"""
            {"roles":{"a":{"publishParams":{"allowed":["screen","audio"],"screen":{"frameRate":5}}}},
             "settings":{"active_speakers":{"threshold":50},"limits":{"max_chat_bytes":100},
                         "room":{"auto_create":false,"predefined":["lobby","Room_2-b"]}}}
            """#
        )
        let a = try #require(t.role("a"))
        #expect(a.publishParams.allowed == [.screen, .audio])
        #expect(a.publishParams.allows(.audio) && !a.publishParams.allows(.video))
        var screen = VideoParams.defaultScreen
        screen.frameRate = 5
        #expect(a.publishParams.screen == screen)
        #expect(t.settings.activeSpeakers == ActiveSpeakerSettings(threshold: 50))
        #expect(t.settings.limits == LimitSettings(maxChatBytes: 100))
        #expect(t.settings.room == RoomSettings(autoCreate: false, predefined: ["lobby", "Room_2-b"]))
        #expect(t.settings.roleChange == RoleChangeSettings())
    }

    @Test func everyValueIsRead() throws {
        let (t, warnings) = try decode(
            #"""
            {"name":"n","roles":{"r":{"name":"r","priority":5,"maxPeerCount":-1,
               "publishParams":{"allowed":["video"],"audio":{"bitRate":64,"codec":"pcmu"},
                 "video":{"bitRate":1,"codec":"h264","frameRate":2,"width":3,"height":4}},
               "subscribeParams":{"subscribeToRoles":["r"],"maxSubsBitRate":0},
               "permissions":{"pollWrite":true}}},
             "settings":{"room":{"max_peers":7,"reconnect_grace_s":0,"large_room_threshold":1,"room_state_interval_ms":9},
               "active_speakers":{"interval_ms":60000,"threshold":0,"max_speakers":100},
               "role_change":{"request_ttl_s":3600},
               "limits":{"max_message_bytes":1,"idle_timeout_s":2,"max_outbound_bytes":3,"max_tracks_per_peer":4,
                 "max_chat_bytes":5,"messages_per_second":6,"message_burst":7,"max_name_bytes":8,"max_metadata_bytes":9}}}
            """#
        )
        #expect(warnings == [])
        #expect(t.name == "n")
        #expect(
            t.role("r")
                == Role(
                    name: "r",
                    priority: 5,
                    maxPeerCount: -1,
                    publishParams: PublishParams(
                        allowed: [.video],
                        audio: AudioParams(bitRate: 64, codec: "pcmu"),
                        video: VideoParams(bitRate: 1, codec: "h264", frameRate: 2, width: 3, height: 4)
                    ),
                    subscribeParams: SubscribeParams(subscribeToRoles: ["r"], maxSubsBitRate: 0),
                    permissions: Permissions(pollWrite: true)
                )
        )
        #expect(
            t.settings
                == Settings(
                    room: RoomSettings(maxPeers: 7, reconnectGraceS: 0, largeRoomThreshold: 1, roomStateIntervalMs: 9),
                    activeSpeakers: ActiveSpeakerSettings(intervalMs: 60000, threshold: 0, maxSpeakers: 100),
                    roleChange: RoleChangeSettings(requestTTLS: 3600),
                    limits: LimitSettings(
                        maxMessageBytes: 1,
                        idleTimeoutS: 2,
                        maxOutboundBytes: 3,
                        maxTracksPerPeer: 4,
                        maxChatBytes: 5,
                        messagesPerSecond: 6,
                        messageBurst: 7,
                        maxNameBytes: 8,
                        maxMetadataBytes: 9
                    )
                )
        )
    }

    // MARK: Errors

    @Test(arguments: [
        // ranges
        (template(guest: #"{"priority":9}"#), "roles.guest.priority: must be between 1 and 5, got 9"),
        (template(guest: #"{"priority":0}"#), "roles.guest.priority: must be between 1 and 5, got 0"),
        (template(guest: #"{"maxPeerCount":-2}"#), "roles.guest.maxPeerCount: must be at least -1, got -2"),
        (
            template(guest: #"{"publishParams":{"video":{"width":0}}}"#),
            "roles.guest.publishParams.video.width: must be at least 1, got 0"
        ),
        (
            template(guest: #"{"publishParams":{"audio":{"bitRate":-5}}}"#),
            "roles.guest.publishParams.audio.bitRate: must be at least 1, got -5"
        ),
        (
            template(guest: #"{"subscribeParams":{"maxSubsBitRate":-1}}"#),
            "roles.guest.subscribeParams.maxSubsBitRate: must be at least 0, got -1"
        ),
        (
            settings("active_speakers", #"{"threshold":101}"#),
            "settings.active_speakers.threshold: must be between 0 and 100, got 101"
        ),
        (
            settings("active_speakers", #"{"interval_ms":99}"#),
            "settings.active_speakers.interval_ms: must be between 100 and 60000, got 99"
        ),
        (
            settings("active_speakers", #"{"max_speakers":0}"#),
            "settings.active_speakers.max_speakers: must be between 1 and 100, got 0"
        ),
        (
            settings("role_change", #"{"request_ttl_s":0}"#),
            "settings.role_change.request_ttl_s: must be between 1 and 3600, got 0"
        ),
        (
            settings("room", #"{"reconnect_grace_s":3601}"#),
            "settings.room.reconnect_grace_s: must be between 0 and 3600, got 3601"
        ),
        (settings("room", #"{"max_peers":-1}"#), "settings.room.max_peers: must be at least 0, got -1"),
        (
            settings("room", #"{"empty_timeout_s":86401}"#),
            "settings.room.empty_timeout_s: must be between 0 and 86400, got 86401"
        ),
        (
            settings("room", #"{"token_refresh_s":-1}"#),
            "settings.room.token_refresh_s: must be between 0 and 86400, got -1"
        ),
        (
            settings("room", #"{"resume_buffer_bytes":65535}"#),
            "settings.room.resume_buffer_bytes: must be between 65536 and 67108864, got 65535"
        ),
        (
            settings("room", #"{"resume_buffer_bytes":67108865}"#),
            "settings.room.resume_buffer_bytes: must be between 65536 and 67108864, got 67108865"
        ),
        (
            settings("room", #"{"large_room_threshold":0}"#),
            "settings.room.large_room_threshold: must be at least 1, got 0"
        ),
        (settings("limits", #"{"max_chat_bytes":0}"#), "settings.limits.max_chat_bytes: must be at least 1, got 0"),
        (
            settings("limits", #"{"max_metadata_bytes":-3}"#),
            "settings.limits.max_metadata_bytes: must be at least 1, got -3"
        ),
        // references and kinds
        (
            template(guest: #"{"subscribeParams":{"subscribeToRoles":["host","hots"]}}"#),
            #"roles.guest.subscribeParams.subscribeToRoles[1]: no role named "hots""#
        ),
        (
            template(guest: #"{"publishParams":{"allowed":["audio","video","smoke"]}}"#),
            #"roles.guest.publishParams.allowed[2]: unknown kind "smoke", expected audio, video or screen"#
        ),
        (
            template(guest: #"{"publishParams":{"allowed":["audio","audio"]}}"#),
            #"roles.guest.publishParams.allowed[1]: duplicate kind "audio""#
        ),
        (
            template(guest: #"{"name":"visitor"}"#),
            #"roles.guest.name: must equal the role's key "guest", got "visitor""#
        ),
        // types
        (template(guest: #"{"priority":"1"}"#), "roles.guest.priority: expected integer, got string"),
        (template(guest: #"{"priority":true}"#), "roles.guest.priority: expected integer, got boolean"),
        (template(guest: #"{"maxPeerCount":1.5}"#), "roles.guest.maxPeerCount: expected integer, got number 1.5"),
        (template(guest: #"{"priority":null}"#), "roles.guest.priority: expected integer, got null"),
        (
            template(guest: #"{"permissions":{"mute":1}}"#),
            "roles.guest.permissions.mute: expected boolean, got number 1"
        ),
        (
            template(guest: #"{"permissions":{"endRoom":"yes"}}"#),
            "roles.guest.permissions.endRoom: expected boolean, got string"
        ),
        (
            template(guest: #"{"publishParams":{"allowed":"audio"}}"#),
            "roles.guest.publishParams.allowed: expected array, got string"
        ),
        (
            template(guest: #"{"publishParams":{"allowed":["audio",2]}}"#),
            "roles.guest.publishParams.allowed[1]: expected string, got number 2"
        ),
        (template(guest: #"{"publishParams":[]}"#), "roles.guest.publishParams: expected object, got array"),
        (
            template(guest: #"{"publishParams":{"audio":{"codec":7}}}"#),
            "roles.guest.publishParams.audio.codec: expected string, got number 7"
        ),
        (template(guest: "[]"), "roles.guest: expected object, got array"),
        (template(extra: #""name":false"#), "name: expected string, got boolean"),
        (template(extra: #""settings":1"#), "settings: expected object, got number 1"),
        (settings("room", #"{"auto_create":"no"}"#), "settings.room.auto_create: expected boolean, got string"),
        // roles
        ("{}", "roles: at least one role is required"),
        (#"{"roles":{}}"#, "roles: at least one role is required"),
        (#"{"roles":["host"]}"#, "roles: expected object, got array"),
        (
            #"{"roles":{"bad name":{}}}"#,
            #"roles.bad name: invalid role name "bad name", expected 1 to 64 characters from A-Z, a-z, 0-9, _ and -"#
        ),
        (
            #"{"roles":{"":{}}}"#,
            #"roles.: invalid role name "", expected 1 to 64 characters from A-Z, a-z, 0-9, _ and -"#
        ),
        (
            #"{"roles":{"\#(String(repeating: "r", count: 65))":{}}}"#,
            #"roles.\#(String(repeating: "r", count: 65)): invalid role name "\#(String(repeating: "r", count: 65))", expected 1 to 64 characters from A-Z, a-z, 0-9, _ and -"#
        ),
        (
            settings("room", #"{"predefined":["ok","not ok"]}"#),
            #"settings.room.predefined[1]: invalid room id "not ok", expected 1 to 64 characters from A-Z, a-z, 0-9, _ and -"#
        ),
        // the file
        ("[]", "the template must be a JSON object, got array"),
        ("", "invalid JSON: line 1, column 1: expected a value, found the end of the input"),
        (#"{"roles":{"a":{}}"#, "invalid JSON: line 1, column 18: expected ',' or '}', found the end of the input"),
        ("{\n  \"roles\": {\"a\": {}},\n}", "invalid JSON: line 3, column 1: expected a string key, found '}'"),
        (#"{"roles":{"a":{"priority":01}}}"#, "invalid JSON: line 1, column 28: expected ',' or '}', found '1'"),
        (#"{"roles":{"a":{}}, "roles":{"b":{}}}"#, #"invalid JSON: line 1, column 20: duplicate key "roles""#),
        (#"{"roles":{"a":{}}} x"#, "invalid JSON: line 1, column 20: expected the end of the input, found 'x'"),
        (#"{"roles":{"a":{"priority":tru}}}"#, "invalid JSON: line 1, column 27: expected a value, found 't'"),
        ("{\"roles\":{\"é\u{01}\":{}}}", "invalid JSON: line 1, column 13: control character in string (escape it)"),
        (#"{"roles":{"a\q":{}}}"#, "invalid JSON: line 1, column 13: invalid escape in string"),
        (#"{"roles":{"\ud800":{}}}"#, "invalid JSON: line 1, column 12: invalid \\u escape (unpaired surrogate)"),
        (#"{"roles":{"a":{"priority":-}}}"#, "invalid JSON: line 1, column 28: expected a digit, found '}'"),
        (#"{"roles":{"a":{"priority":1.}}}"#, "invalid JSON: line 1, column 29: expected a digit, found '}'"),
        (String(repeating: "[", count: 300), "invalid JSON: line 1, column 257: nested deeper than 256 levels"),
    ])
    func rejects(_ json: String, _ expected: String) {
        #expect(failure(json) == expected)
    }

    @Test func invalidJSONIsReportedWithoutAPath() throws {
        let error = try #require(throws: TemplateError.self) { try decode("{") }
        #expect(error.path == "")
        #expect(error.problem == "invalid JSON: line 1, column 2: expected a string key, found the end of the input")
    }

    @Test func invalidUTF8IsRejected() {
        let bytes: [UInt8] = Array(#"{"roles":{""#.utf8) + [0xC3, 0x28] + Array(#"":{}}}"#.utf8)
        #expect(throws: TemplateError(path: "", problem: "invalid JSON: line 1, column 11: string is not valid UTF-8"))
        {
            try RoleTemplate.decode(bytes)
        }
    }

    @Test func errorsNameThePathAndProblemSeparately() throws {
        let error = try #require(throws: TemplateError.self) { try decode(template(guest: #"{"priority":9}"#)) }
        #expect(error == TemplateError(path: "roles.guest.priority", problem: "must be between 1 and 5, got 9"))
    }

    @Test func everyProblemIsListedInKeyOrder() throws {
        // Both roles are wrong: "alpha" sorts first, whatever the file order.
        #expect(
            failure(#"{"roles":{"zulu":{"priority":7},"alpha":{"priority":8}}}"#)
                == "roles.alpha.priority: must be between 1 and 5, got 8\nroles.zulu.priority: must be between 1 and 5, got 7"
        )
        // Role names are checked before any role's contents.
        #expect(failure(#"{"roles":{"a":{"priority":7},"b c":{}}}"#)?.hasPrefix("roles.b c: invalid role name") == true)
        // Repeated decoding gives the same answer.
        let json =
            #"{"roles":{"b":{"maxPeerCount":-9},"a":{"subscribeParams":{"subscribeToRoles":["x"]}}},"settings":{"limits":{"message_burst":0}}}"#
        let all = failure(json)
        #expect(
            all == #"""
                roles.a.subscribeParams.subscribeToRoles[0]: no role named "x"
                roles.b.maxPeerCount: must be at least -1, got -9
                settings.limits.message_burst: must be at least 1, got 0
                """#
        )
        for _ in 0..<20 { #expect(failure(json) == all) }
        let error = try #require(throws: TemplateError.self) { try decode(json) }
        #expect(error.path == "roles.a.subscribeParams.subscribeToRoles[0]", "the first is the error's own path")
        #expect(
            error.all.map(\.path) == [
                "roles.a.subscribeParams.subscribeToRoles[0]", "roles.b.maxPeerCount",
                "settings.limits.message_burst",
            ]
        )
    }

    @Test func strictMakesUnknownKeysAndPermissionsProblemsWithADidYouMean() throws {
        let json =
            #"{"roles":{"host":{"permissions":{"endroom":true,"mute":true,"pollwrte":true,"teleport":true},"priorty":2}},"settings":{"limits":{"max_mesage_bytes":10}}}"#
        let error = try #require(throws: TemplateError.self) { try RoleTemplate.decode(Array(json.utf8), strict: true) }
        #expect(
            error.description == """
                roles.host.permissions.endroom: unknown permission, did you mean endRoom?
                roles.host.permissions.pollwrte: unknown permission, did you mean pollWrite?
                roles.host.permissions.teleport: unknown permission
                roles.host.priorty: unknown key, did you mean priority?
                settings.limits.max_mesage_bytes: unknown key, did you mean max_message_bytes?
                """
        )
        // Without strict the same template loads, with the hints as warnings.
        let (_, warnings) = try decode(json)
        #expect(warnings.contains("roles.host.permissions.endroom: unknown permission ignored, did you mean endRoom?"))
    }

    @Test func unreadableFile() {
        #expect(
            throws: TemplateError(path: "", problem: "cannot read /nonexistent/roles.json: No such file or directory")
        ) {
            try RoleTemplate.load(path: "/nonexistent/roles.json")
        }
        #expect(throws: TemplateError(path: "", problem: "cannot read /: Is a directory")) {
            try RoleTemplate.load(path: "/")
        }
    }

    // MARK: Warnings

    @Test func unknownKeysBecomeWarningsWithTheirPaths() throws {
        let (t, warnings) = try decode(
            #"""
            {"id":"64ab","roles":{
               "host":{"name":"host","recordingParams":{},"publishParams":{"allowed":["audio"],"simulcast":true,
                 "video":{"bitRate":500,"layers":[]}},
                 "subscribeParams":{"subscribeToRoles":["host"],"subscribeDegradation":{}},
                 "permissions":{"mute":true,"sendRoomState":true,"whiteboard":null}}},
             "settings":{"room":{"shape":"round"},"colour":"blue"}}
            """#
        )
        #expect(
            warnings == [
                "id: unknown key ignored",
                "roles.host.permissions.sendRoomState: unknown permission ignored",
                "roles.host.permissions.whiteboard: unknown permission ignored",
                "roles.host.publishParams.simulcast: unknown key ignored",
                "roles.host.publishParams.video.layers: unknown key ignored",
                "roles.host.recordingParams: unknown key ignored",
                "roles.host.subscribeParams.subscribeDegradation: unknown key ignored",
                "settings.colour: unknown key ignored",
                "settings.room.shape: unknown key ignored",
            ]
        )
        let host = try #require(t.role("host"))
        #expect(host.permissions == Permissions(mute: true))
        #expect(host.publishParams.video == VideoParams(bitRate: 500))
        #expect(host.publishParams.allowed == [.audio])
    }

    // MARK: Role order and lookups

    @Test func roleNamesAreSortedByPriorityThenName() {
        var t = RoleTemplate(roles: [
            Role(name: "viewer", priority: 4), Role(name: "b", priority: 2), Role(name: "host", priority: 1),
            Role(name: "a", priority: 2), Role(name: "Z", priority: 2),
        ])
        #expect(t.name == "roomd")
        #expect(t.settings == Settings())
        #expect(t.roleNames == ["host", "Z", "a", "b", "viewer"])
        #expect(t.role("a")?.priority == 2)
        #expect(t.role("nobody") == nil)

        t.roles["a"]?.priority = 5
        t.roles["early"] = Role(name: "early", priority: 1)
        #expect(t.roleNames == ["early", "host", "Z", "b", "viewer", "a"])
        t.roles["viewer"] = nil
        #expect(t.roleNames == ["early", "host", "Z", "b", "a"])
    }

    @Test func decodedRoleNamesFollowPriorities() throws {
        let (t, _) = try decode(#"{"roles":{"c":{"priority":1},"b":{"priority":3},"a":{"priority":3},"d":{}}}"#)
        #expect(t.roleNames == ["c", "d", "a", "b"])
        #expect(Set(t.roles.keys) == ["a", "b", "c", "d"])
        #expect(t.roles.allSatisfy { $0.key == $0.value.name })
    }

    @Test func aLaterRoleReplacesAnEarlierOneOfTheSameName() {
        let t = RoleTemplate(roles: [Role(name: "x", priority: 1), Role(name: "x", priority: 3)])
        #expect(t.roleNames == ["x"])
        #expect(t.role("x")?.priority == 3)
    }

    @Test func permissionNamesAndSubscript() throws {
        #expect(
            Permissions.names == [
                "endRoom", "removeOthers", "mute", "unmute", "changeRole", "hlsStreaming",
                "rtmpStreaming", "browserRecording", "pollRead", "pollWrite", "moderateChat", "updateOwnMetadata",
            ]
        )
        #expect(Permissions()["sendRoomState"] == nil)
        #expect(Permissions.all["pollWrite"] == true)
        // Each JSON name sets exactly its own property.
        for name in Permissions.names {
            let others = name == "updateOwnMetadata" ? "" : #","updateOwnMetadata":false"#
            let (t, warnings) = try decode(#"{"roles":{"r":{"permissions":{"\#(name)":true\#(others)}}}}"#)
            #expect(warnings == [])
            let p = try #require(t.role("r")).permissions
            #expect(Permissions.names.filter { p[$0] == true } == [name])
        }
        let p = Permissions(mute: true, changeRole: true)
        #expect(p["mute"] == true && p["changeRole"] == true && p["endRoom"] == false && p.mute && !p.unmute)
    }

    @Test func publishAndSubscribeHelpers() {
        let role = Role(
            name: "r",
            publishParams: PublishParams(allowed: [.video]),
            subscribeParams: SubscribeParams(subscribeToRoles: ["a"])
        )
        #expect(role.publishParams.canPublish)
        #expect(role.publishParams.allows(.video) && !role.publishParams.allows(.audio))
        #expect(role.subscribes(to: "a") && !role.subscribes(to: "r"))
        #expect(!PublishParams().canPublish)
        #expect(PublishKind.allCases.map(\.rawValue) == ["audio", "video", "screen"])
    }

    @Test func errorDescription() {
        #expect(TemplateError(path: "a.b", problem: "bad").description == "a.b: bad")
        #expect(TemplateError(path: "", problem: "bad").description == "bad")
    }

    // MARK: The JSON reader

    @Test func jsonNumbersEscapesAndWhitespace() throws {
        // 2.0 and 4e0 are integers in value; \u escapes (with a surrogate pair) in names; a BOM and CRLF.
        let json =
            "\u{FEFF}{\r\n\t\"roles\" : {\"\\u0068ost\":{\"priority\":2.0,\"maxPeerCount\":4e0},"
            + "\"b\":{\"subscribeParams\":{\"subscribeToRoles\":[\"host\"]},\"x\":\"tab\\t \\\"q\\\" \\ud83d\\ude00 \\/\"}}}"
        let (t, warnings) = try decode(json)
        #expect(t.roleNames == ["b", "host"])
        #expect(t.role("host")?.priority == 2)
        #expect(t.role("host")?.maxPeerCount == 4)
        #expect(warnings == ["roles.b.x: unknown key ignored"])
        #expect(
            failure(template(guest: #"{"priority":1e30}"#))
                == "roles.guest.priority: expected integer, got number 1e30",
            "numbers are shown as written"
        )
    }
}
