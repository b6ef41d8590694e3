import RoomModel
import RoomWire

/// `GET /v2/rooms/{room_id}/feed?from=S&to=T` (PROTOCOL.md section 24): the
/// audience feed. The span's rules, the token and a cached body are checked
/// without touching the room (`prepare`); only a body not yet built reads
/// the room's `FeedRecorder` (`build`), once per (room, S, T). In a cluster
/// the first half runs on the node asked and the second on the room's home
/// (RestForwarder), whose answer the node asked keeps in its own cache.
/// Its service thread's only, its cache too (checked in debug builds).
final class RestFeed {
    static let prefix = "/v2/rooms/"
    static let suffix = "/feed"
    /// The longest span (seconds).
    static let maxSpan: Int64 = 60
    /// `from`/`to` longer than this are not Unix seconds (and could overflow an Int64 in ms).
    static let maxDigits = 11
    static let cacheControl = HTTPHeader(name: "cache-control", value: "public, max-age=60")

    let registry: RoomRegistry
    let verifier: TokenVerifier
    let clock: RoomClock
    let cache: FeedCache
    let metrics: ServerMetrics
    /// App tokens verified here, with their room and `exp` (ms): a viewer polls
    /// with the same token every 3 s, and its signature and claims are checked
    /// once, not per request. Bounded: emptied when it reaches `maxKnownTokens`.
    private var tokens: [String: (roomID: RoomID, expiresAt: Int64)] = [:]
    static let maxKnownTokens = 16_384
    /// App tokens known (a test of the bound).
    var knownTokens: Int { tokens.count }
    private let isPublic: Bool
    private let windowSeconds: Int64
    private let thread: ServiceThread

    init(
        thread: ServiceThread,
        registry: RoomRegistry,
        verifier: TokenVerifier,
        clock: RoomClock,
        metrics: ServerMetrics,
        cache: FeedCache = FeedCache()
    ) {
        self.thread = thread
        self.metrics = metrics
        self.registry = registry
        self.verifier = verifier
        self.clock = clock
        self.cache = cache
        isPublic = registry.settings.feed.isPublic
        windowSeconds = Int64(registry.settings.feed.windowSeconds)
    }

    /// Whether `path` is a feed route.
    static func handles(_ path: String) -> Bool { roomID(in: path) != nil }

    /// The room of `/v2/rooms/{room_id}/feed`, or nil.
    /// (Byte comparisons: Foundation's `contains` of a string cost 5 % of a
    /// kept-alive feed request, `make bench` (m).)
    static func roomID(in path: String) -> RoomID? {
        let bytes = path.utf8
        guard bytes.count > prefix.utf8.count + suffix.utf8.count, bytes.starts(with: prefix.utf8),
            bytes.reversed().starts(with: suffix.utf8.reversed())
        else { return nil }
        let room = bytes.dropFirst(prefix.utf8.count).dropLast(suffix.utf8.count)
        return room.contains(UInt8(ascii: "/")) ? nil : RoomID(String(decoding: room, as: UTF8.self))
    }

    /// A request that needs the room: its span, checked.
    struct Query: Sendable, Equatable {
        var key: FeedCache.Key
        var ifNoneMatch: String?
    }

    enum Step {
        /// Answered without the room: an error, or a cached body (200 or 304).
        case answer(HTTPResponse)
        /// The body must be built from the room's record.
        case build(Query)
    }

    /// Everything that needs no room: the route, the span, the token, the cache.
    func prepare(_ request: HTTPRequest) -> Step {
        thread.assertIsCurrent()
        do throws(RoomError) {
            guard request.method == .get else {
                return .answer(.error(405, code: 405, "the feed takes GET, not \(request.method.rawValue)"))
            }
            guard let roomID = Self.roomID(in: request.path) else {
                return .answer(.error(404, code: 404, "no route for \(request.path)"))
            }
            try authorize(request, roomID: roomID)
            let from = try Self.second(request.query["from"], "from")
            let to = try Self.second(request.query["to"], "to")
            guard from < to else { throw .invalidParams("from: must be before to, got from=\(from) to=\(to)") }
            guard to - from <= Self.maxSpan else {
                throw .invalidParams("to: a span is at most \(Self.maxSpan) s, got \(to - from) s")
            }
            let now = Self.floorSecond(clock.nowMillis())
            guard to <= now else { throw .invalidParams("to: \(to) is in the future (now is \(now))") }
            if from < now - windowSeconds {
                return .answer(
                    .error(
                        410,
                        code: 410,
                        "from: \(from) is older than the feed's window of \(windowSeconds) s (settings.feed.window_s)"
                    )
                )
            }
            let key = FeedCache.Key(room: roomID, from: from, to: to)
            if let entry = cache.entry(key) {
                metrics.feedCacheHits.increment()
                return .answer(Self.answer(entry, ifNoneMatch: request.ifNoneMatch))
            }
            return .build(Query(key: key, ifNoneMatch: request.ifNoneMatch))
        } catch {
            return .answer(.error(Self.status(error.code), code: error.code.rawValue, error.message))
        }
    }

    /// The body of a span not in the cache, from the room's record (this node
    /// holds the room, or held it); kept in the cache when it is a 200.
    func build(_ query: Query) -> HTTPResponse {
        thread.assertIsCurrent()
        switch registry.feed(query.key.room, from: query.key.from, to: query.key.to) {
        case .noSession:
            return .error(404, code: 40001, "room \"\(query.key.room)\" has no session at \(query.key.to)")
        case .gone:
            return .error(410, code: 410, "from: the feed of \(query.key.from) is no longer held")
        case .span(let span):
            let entry = cache.insert(query.key, body: Self.encode(span))
            metrics.feedBodiesBuilt.increment()
            return Self.answer(entry, ifNoneMatch: query.ifNoneMatch)
        }
    }

    /// A request of this node or forwarded by another one, answered here.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        thread.assertIsCurrent()
        return switch prepare(request) {
        case .answer(let response): response
        case .build(let query): build(query)
        }
    }

    /// The home's 200 for a forwarded span: kept here too, so that this node answers the next callers.
    func keep(_ query: Query, _ response: HTTPResponse) -> HTTPResponse {
        thread.assertIsCurrent()
        guard response.status == 200 else { return response }
        let entry = cache.insert(query.key, body: response.body)
        return Self.answer(entry, ifNoneMatch: query.ifNoneMatch)
    }

    static func answer(_ entry: FeedCache.Entry, ifNoneMatch: String?) -> HTTPResponse {
        let headers = [cacheControl, HTTPHeader(name: "etag", value: entry.etag)]
        if FeedCache.matches(ifNoneMatch, entry.etag) {
            return HTTPResponse(status: 304, body: [], headers: headers)
        }
        return HTTPResponse(status: 200, body: entry.body, headers: headers)
    }

    // MARK: input

    /// The token (`Authorization: Bearer` or `?token=`): an app token of this
    /// room or a management token; none when `settings.feed.public`.
    private func authorize(_ request: HTTPRequest, roomID: RoomID) throws(RoomError) {
        if isPublic { return }
        let token: String
        if let header = request.authorization, header.hasPrefix("Bearer ") {
            token = String(header.dropFirst("Bearer ".count))
        } else if let query = request.query["token"], !query.isEmpty {
            token = query
        } else {
            throw RoomError(.tokenInvalid, "a token is required: Authorization: Bearer <token> or ?token=")
        }
        if let known = tokens[token], known.expiresAt > clock.nowMillis() {  // a viewer's next poll: no JWT work
            guard known.roomID == roomID else { throw Self.otherRoom }
            return
        }
        let grant: AppGrant
        do throws(RoomError) {
            grant = try verifier.verifyApp(token)  // viewers' tokens first: one verification each
        } catch  where error.code == .tokenInvalid {
            // Not an app token: a management token is welcome, anything else gets the app token's error.
            do throws(RoomError) {
                try verifier.verifyManagement(token)
                return
            } catch _ {
                throw error
            }
        }
        if tokens.count >= Self.maxKnownTokens { tokens.removeAll(keepingCapacity: true) }
        tokens[token] = (grant.roomID, grant.expiresAt)
        guard grant.roomID == roomID else { throw Self.otherRoom }
    }

    static let otherRoom = RoomError(.permissionDenied, "permission denied: the token is for another room")

    /// A whole second: plain decimal digits (no sign, no fraction), at most `maxDigits`.
    static func second(_ text: String?, _ name: String) throws(RoomError) -> Int64 {
        guard let text else { throw .invalidParams("\(name): required (whole seconds, Unix time)") }
        let digits = text.utf8
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            throw .invalidParams("\(name): must be a whole number of seconds, got \"\(text.prefix(32))\"")
        }
        guard digits.count <= maxDigits, let value = Int64(text) else {
            throw .invalidParams("\(name): \(text.prefix(32))… is not a Unix time in seconds")
        }
        return value
    }

    static func floorSecond(_ millis: Int64) -> Int64 { millis >= 0 ? millis / 1000 : (millis - 999) / 1000 }

    static func status(_ code: ErrorCode) -> Int {
        switch code {
        case .permissionDenied: 403
        case .invalidParams: 400
        default: 401  // every token problem
        }
    }

    // MARK: the body

    /// `{room_id, from, to, stream, peer_count, chat, deleted, pinned, reactions,
    /// polls, poll_stats, questions:{changed, removed}, chat_state, ended}`.
    static func encode(_ span: FeedSpan) -> [UInt8] {
        Dispatcher.encode { w in
            w.field("room_id", span.roomID)
            w.field("from", span.from)
            w.field("to", span.to)
            w.key("stream")
            w.feedStream(span.state.stream, at: span.to * 1000)
            w.field("peer_count", span.state.peerCount)
            w.key("chat")
            w.array { w in for message in span.chat { w.chatMessage(message) } }
            w.key("deleted")
            w.strings(span.deleted)
            w.key("pinned")
            w.chatMessage(span.state.pinned)
            w.key("reactions")
            w.array { w in for count in span.reactions { w.object { w in w.reactionCountFields(count) } } }
            w.key("polls")
            w.array { w in for info in span.polls { w.object { w in w.pollInfoFields(info) } } }
            w.key("poll_stats")
            w.array { w in for stats in span.pollStats { w.object { w in w.pollResultFields(stats) } } }
            w.key("questions")
            w.object { w in
                w.key("changed")
                w.array { w in for question in span.questionsChanged { w.question(question) } }
                w.key("removed")
                w.strings(span.questionsRemoved)
            }
            w.key("chat_state")
            w.object { w in
                w.field("paused", span.state.paused)
                w.field("slow_mode_s", span.state.slowModeSeconds)
            }
            w.field("ended", span.ended)
        }
    }
}

extension JSONWriter {
    /// The feed's `stream`: the stream object of `room.hls` and
    /// `on-hls-update` (its `state`, `starts_at`, `vod_url` included) as of
    /// `millis`, with the cues live then; null before the room had a stream.
    mutating func feedStream(_ stream: LiveStream?, at millis: Int64) {
        guard let stream else { return null() }
        object { w in
            w.liveStreamFields(stream, cues: stream.cues.filter { $0.startDate < millis && $0.endDate > millis })
        }
    }
}
