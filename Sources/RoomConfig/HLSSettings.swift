/// `settings.hls` (1.1, PROTOCOL.md section 16).
public struct HLSSettings: Sendable, Equatable {
    public static let defaultPlaylistURL = "/hls/{room_id}/{session_id}/index.m3u8"

    /// `playlist_url`: each variant's `url`, with `{room_id}` and `{session_id}`
    /// replaced. An absolute path or an http(s) URL.
    public var playlistURL: String = Self.defaultPlaylistURL
    /// `max_live_cues` (roomd extension): live timed-metadata cues per room, 1...1000.
    public var maxLiveCues: Int = 100

    public init(playlistURL: String = Self.defaultPlaylistURL, maxLiveCues: Int = 100) {
        self.playlistURL = playlistURL
        self.maxLiveCues = maxLiveCues
    }
}

extension HLSSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        playlistURL = try c.string("playlist_url", default: playlistURL)
        let isPath = playlistURL.hasPrefix("/") && WebURL.isPrintable(playlistURL)
        if playlistURL.utf8.count > 2048 || (!isPath && WebURL(playlistURL) == nil) {
            c.report(
                c.path("playlist_url"),
                "expected an absolute path or an http(s) URL of at most 2048 bytes, got \"\(playlistURL)\""
            )
        }
        maxLiveCues = try c.int("max_live_cues", default: maxLiveCues, in: 1...1000)
    }
}
