import Testing

@testable import RoomConfig

/// `settings.hls` and `settings.webhooks` (1.1): defaults, ranges, URLs.
@Suite struct OperatorSettingsTests {
    private func decode(_ settings: String) throws(TemplateError) -> Settings {
        try RoleTemplate.decode(Array(#"{"roles":{"host":{}},"settings":\#(settings)}"#.utf8)).template.settings
    }

    private func failure(_ settings: String) -> String? {
        do {
            _ = try decode(settings)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func defaults() throws {
        let settings = try decode("{}")
        #expect(settings.hls.playlistURL == "/hls/{room_id}/{session_id}/index.m3u8")
        #expect(settings.hls.maxLiveCues == 100)
        #expect(settings.webhooks == nil, "no webhooks unless configured")
        let hooks = try #require(try decode(#"{"webhooks":{"url":"https://backend.example.com/roomd"}}"#).webhooks)
        #expect(hooks.events == WebhookEventKind.allCases)
        #expect(hooks.timeoutMs == 5000 && hooks.maxAttempts == 6 && hooks.queueLimit == 10000)
    }

    @Test func everyValueIsRead() throws {
        let settings = try decode(
            #"""
            {"hls":{"playlist_url":"https://cdn.example.com/{room_id}/{session_id}.m3u8","max_live_cues":7},
             "webhooks":{"url":"http://127.0.0.1:9000/hooks?x=1","events":["peer.join.success","poll.started","peer.join.success"],
                         "timeout_ms":250,"max_attempts":2,"queue_limit":3}}
            """#
        )
        #expect(
            settings.hls
                == HLSSettings(playlistURL: "https://cdn.example.com/{room_id}/{session_id}.m3u8", maxLiveCues: 7)
        )
        #expect(
            settings.webhooks
                == WebhookSettings(
                    url: "http://127.0.0.1:9000/hooks?x=1",
                    events: [.peerJoin, .pollStarted],
                    timeoutMs: 250,
                    maxAttempts: 2,
                    queueLimit: 3
                )
        )
    }

    @Test(arguments: [
        (#"{"webhooks":{}}"#, "settings.webhooks.url: required: the receiver's http(s) URL"),
        (
            #"{"webhooks":{"url":"not a url"}}"#,
            #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "not a url""#
        ),
        (
            #"{"webhooks":{"url":"ftp://example.com/x"}}"#,
            #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "ftp://example.com/x""#
        ),
        (
            #"{"webhooks":{"url":"http://"}}"#,
            #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "http://""#
        ),
        (
            #"{"webhooks":{"url":"http://host:99999/"}}"#,
            #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "http://host:99999/""#
        ),
        (
            #"{"webhooks":{"url":"http://ho st/"}}"#,
            #"settings.webhooks.url: expected an http(s) URL of at most 2048 bytes, got "http://ho st/""#
        ),
        (#"{"webhooks":{"url":5}}"#, "settings.webhooks.url: expected string, got number 5"),
        (
            #"{"webhooks":{"url":"http://h/","events":["peer.join.success","peer.joined"]}}"#,
            #"settings.webhooks.events[1]: unknown event "peer.joined", expected one of session.open.success, session.close.success, peer.join.success, peer.leave.success, role.change.success, hls.started.success, hls.stopped.success, poll.started, poll.stopped, room.end.success, peer.banned, peer.unbanned, chat.banned, message.deleted, report.created, stream.scheduled, stream.live, stream.ended, stream.vod, rtmp.started.success, rtmp.stopped.success, recording.started.success, recording.stopped.success, stage.requested, stage.invited, stage.live, stage.declined, stage.withdrawn, stage.done, message.held, message.approved, message.rejected"#
        ),
        (#"{"webhooks":{"url":"http://h/","events":"all"}}"#, "settings.webhooks.events: expected array, got string"),
        (
            #"{"webhooks":{"url":"http://h/","timeout_ms":50}}"#,
            "settings.webhooks.timeout_ms: must be between 100 and 600000, got 50"
        ),
        (
            #"{"webhooks":{"url":"http://h/","max_attempts":0}}"#,
            "settings.webhooks.max_attempts: must be between 1 and 12, got 0"
        ),
        (
            #"{"webhooks":{"url":"http://h/","queue_limit":0}}"#,
            "settings.webhooks.queue_limit: must be between 1 and 1000000, got 0"
        ),
        (
            #"{"hls":{"playlist_url":"index.m3u8"}}"#,
            #"settings.hls.playlist_url: expected an absolute path or an http(s) URL of at most 2048 bytes, got "index.m3u8""#
        ),
        (
            #"{"hls":{"playlist_url":"/a b.m3u8"}}"#,
            #"settings.hls.playlist_url: expected an absolute path or an http(s) URL of at most 2048 bytes, got "/a b.m3u8""#
        ),
        (#"{"hls":{"max_live_cues":0}}"#, "settings.hls.max_live_cues: must be between 1 and 1000, got 0"),
    ])
    func rejects(_ settings: String, _ expected: String) {
        #expect(failure(settings) == expected)
    }

    /// Issue 20, item 5: with the backoff capped at 5 minutes, more than 12 attempts
    /// would only add 5-minute waits (20 used to wait 2^18 s before the last).
    @Test func maxAttemptsIsAtMost12() throws {
        #expect(try decode(#"{"webhooks":{"url":"http://h/","max_attempts":12}}"#).webhooks?.maxAttempts == 12)
        #expect(
            failure(#"{"webhooks":{"url":"http://h/","max_attempts":13}}"#)
                == "settings.webhooks.max_attempts: must be between 1 and 12, got 13"
        )
        #expect(
            failure(#"{"webhooks":{"url":"http://h/","max_attempts":20}}"#)
                == "settings.webhooks.max_attempts: must be between 1 and 12, got 20"
        )
    }

    @Test func everyProblemIsListed() {
        let problems = failure(
            #"{"webhooks":{"url":"nope","events":["x"],"max_attempts":0},"hls":{"playlist_url":"rel"}}"#
        )?
        .split(separator: "\n").map { String($0.prefix { $0 != ":" }) }
        #expect(
            Set(problems ?? []) == [
                "settings.webhooks.url", "settings.webhooks.events[0]", "settings.webhooks.max_attempts",
                "settings.hls.playlist_url",
            ]
        )
    }

    @Test func urls() {
        #expect(WebURL("https://Example.com:8443/a/b?c=d")?.port == 8443)
        #expect(WebURL("http://[::1]:8080/hooks")?.host == "[::1]")
        #expect(WebURL("http://user:pw@host/x")?.host == "host")
        #expect(WebURL("http://user:pw@host:81/x?y=1#z")?.authority == "host:81")
        #expect(WebURL("http://user:pw@host:81/x?y=1#z")?.target == "/x?y=1")
        #expect(WebURL("http://[::1]:8080")?.target == "/")
        #expect(WebURL("http://host?q")?.target == "/?q")
        #expect(WebURL("http://[::1/") == nil)
        #expect(WebURL("http://host:0/") == nil)
        #expect(WebURL("http://host:abc/") == nil)
        #expect(WebURL("https//host/") == nil)
        #expect(WebURL("") == nil)
    }
}
