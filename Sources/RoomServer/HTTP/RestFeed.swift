import RoomModel
import RoomWire

/// `GET /v2/rooms/{room_id}/feed?from=S&to=T` (PROTOCOL.md section 24): the
/// audience feed. The span's rules, the token and a cached body are checked
/// without touching the room (`prepare`); only a body not yet built reads
/// the room's `FeedRecorder` (`build`), once per (room, S, T), assembled from
/// its seconds' pieces, each encoded once (`FeedPieces`); builds are capped
/// per room and per caller (`FeedBuildLimits`: 429 past them). In a cluster
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
    /// The seconds' encoded pieces that bodies are assembled from.
    let pieces = FeedPieces()
    let metrics: ServerMetrics
    /// Builds per room and per caller (checked on the node asked).
    private var limits: FeedBuildLimits
    /// The longest token read (`Authorization: Bearer` or `?token=`): a longer one is 413.
    static let maxTokenBytes = 4096
    static let retryAfter = HTTPHeader(name: "retry-after", value: "1")
    /// App tokens verified here, with their room and `exp` (ms): a viewer polls
    /// with the same token every 3 s, and its signature and claims are checked
    /// once, not per request. Bounded: emptied when it reaches `maxKnownTokens`.
    private var tokens: [String: (roomID: RoomID, userID: UserID, expiresAt: Int64)] = [:]
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
        limits = FeedBuildLimits(
            roomRate: registry.settings.feed.buildsPerSecond,
            callerRate: registry.settings.feed.callerBuildsPerSecond
        )
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
        /// Whom its build counts for (`FeedBuildLimits`); nil: not counted
        /// here (a request another node forwarded, counted there).
        var caller: String?
    }

    enum Step {
        /// Answered without the room: an error, or a cached body (200 or 304).
        case answer(HTTPResponse)
        /// The body must be built from the room's record.
        case build(Query)
    }

    /// Everything that needs no room: the route, the span, the token, the
    /// cache, and the build caps (`charged`: false for a request another node
    /// forwarded, which that node counts).
    func prepare(_ request: HTTPRequest, charged: Bool = true) -> Step {
        thread.assertIsCurrent()
        do throws(RoomError) {
            guard request.method == .get else {
                return .answer(.error(405, code: 405, "the feed takes GET, not \(request.method.rawValue)"))
            }
            guard let roomID = Self.roomID(in: request.path) else {
                return .answer(.error(404, code: 404, "no route for \(request.path)"))
            }
            let caller = try authorize(request, roomID: roomID)
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
            let counted: String? = charged ? caller ?? address(request) : nil
            if let counted, let refused = limits.refusal(room: roomID, caller: counted, now: clock.nowMillis()) {
                metrics.feedBuildsRefused.increment()
                let message =
                    switch refused {
                    case .caller:
                        "feed: more than \(limits.callerRate) new spans a second from one caller "
                            + "(settings.feed.caller_builds_per_second): retry after 1 s"
                    case .room:
                        "feed: more than \(limits.roomRate) new spans a second of room \"\(roomID)\" "
                            + "(settings.feed.builds_per_second): retry after 1 s"
                    }
                var answer = HTTPResponse.error(429, code: ErrorCode.rateLimited.rawValue, message)
                answer.headers = [Self.retryAfter]
                return .answer(answer)
            }
            return .build(Query(key: key, ifNoneMatch: request.ifNoneMatch, caller: counted))
        } catch {
            return .answer(.error(Self.status(error.code), code: error.code.rawValue, error.message))
        }
    }

    /// The body of a span not in the cache, from the room's record (this node
    /// holds the room, or held it); kept in the cache when it is a 200.
    func build(_ query: Query) -> HTTPResponse {
        thread.assertIsCurrent()
        switch registry.feedSeconds(query.key.room, from: query.key.from, to: query.key.to) {
        case .noSession:
            return .error(404, code: 40001, "room \"\(query.key.room)\" has no session at \(query.key.to)")
        case .gone:
            return .error(410, code: 410, "from: the feed of \(query.key.from) is no longer held")
        case .seconds(let stored):
            let encoded = pieces.encoded
            let body = assemble(stored)
            if pieces.encoded > encoded { metrics.feedSecondsEncoded.increment(by: pieces.encoded - encoded) }
            let entry = cache.insert(query.key, body: body)
            metrics.feedBodiesBuilt.increment()
            if let caller = query.caller { limits.built(room: query.key.room, caller: caller, now: clock.nowMillis()) }
            return Self.answer(entry, ifNoneMatch: query.ifNoneMatch)
        }
    }

    /// A request of this node or forwarded by another one (`forwarded`: its
    /// build caps were checked there), answered here.
    func handle(_ request: HTTPRequest, forwarded: Bool = false) -> HTTPResponse {
        thread.assertIsCurrent()
        return switch prepare(request, charged: !forwarded) {
        case .answer(let response): response
        case .build(let query): build(query)
        }
    }

    /// The home's 200 for a forwarded span: kept here too, so that this node answers the next callers.
    func keep(_ query: Query, _ response: HTTPResponse) -> HTTPResponse {
        thread.assertIsCurrent()
        guard response.status == 200 else { return response }
        if let caller = query.caller { limits.built(room: query.key.room, caller: caller, now: clock.nowMillis()) }
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
    /// room or a management token; none when `settings.feed.public`. Returns
    /// whom the build caps count it for: the app token's user, "management",
    /// or nil (public: the address).
    private func authorize(_ request: HTTPRequest, roomID: RoomID) throws(RoomError) -> String? {
        if isPublic { return nil }
        let token: String
        if let header = request.authorization, header.hasPrefix("Bearer ") {
            token = String(header.dropFirst("Bearer ".count))
        } else if let query = request.query["token"], !query.isEmpty {
            token = query
        } else {
            throw RoomError(.tokenInvalid, "a token is required: Authorization: Bearer <token> or ?token=")
        }
        guard token.utf8.count <= Self.maxTokenBytes else {
            throw RoomError(
                .tooLarge,
                "token: \(token.utf8.count) bytes, over the \(Self.maxTokenBytes) a token may have"
            )
        }
        if let known = tokens[token], known.expiresAt > clock.nowMillis() {  // a viewer's next poll: no JWT work
            guard known.roomID == roomID else { throw Self.otherRoom }
            return "user:" + known.userID.rawValue
        }
        let grant: AppGrant
        do throws(RoomError) {
            grant = try verifier.verifyApp(token)  // viewers' tokens first: one verification each
        } catch  where error.code == .tokenInvalid {
            // Not an app token: a management token is welcome, anything else gets the app token's error.
            do throws(RoomError) {
                try verifier.verifyManagement(token)
                return "management"
            } catch _ {
                throw error
            }
        }
        if tokens.count >= Self.maxKnownTokens { tokens.removeAll(keepingCapacity: true) }
        tokens[token] = (grant.roomID, grant.userID, grant.expiresAt)
        guard grant.roomID == roomID else { throw Self.otherRoom }
        return "user:" + grant.userID.rawValue
    }

    /// Where a request without a token came from, as the build caps count it.
    private func address(_ request: HTTPRequest) -> String {
        "address:" + (request.socket >= 0 ? PeerAddress(peerOf: request.socket) ?? .unknown : .unknown).description
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
        case .tooLarge: 413
        default: 401  // every token problem
        }
    }

    // MARK: the body

    /// The body of a span from its seconds' pieces (each encoded once, kept
    /// in `pieces`): the same bytes as `encode` of the same span, for a copy
    /// of the span's pieces instead of an encoding of its items.
    func assemble(_ stored: FeedSeconds) -> [UInt8] {
        let parts = stored.seconds.map { pieces.piece(room: stored.roomID, session: stored.sessionID, $0) }
        let merge = stored.merge()
        let size = parts.reduce(256) { $0 + $1.buffer.count }
        var w = JSONWriter(reserving: size)
        w.object { w in
            w.feedHead(stored.roomID, from: stored.from, to: stored.to, stored.state)
            w.key("chat")
            w.array { w in for part in parts where !part.chat.isEmpty { w.raw(part.buffer[part.chat]) } }
            w.key("deleted")
            w.array { w in for part in parts where !part.deleted.isEmpty { w.raw(part.buffer[part.deleted]) } }
            w.key("pinned")
            w.chatMessage(stored.state.pinned)
            w.key("reactions")
            w.array { w in
                for ref in merge.reactions { w.raw(parts[ref.second].buffer[parts[ref.second].reactions[ref.item]]) }
            }
            w.key("polls")
            w.array { w in for ref in merge.polls { w.raw(parts[ref.second].buffer[parts[ref.second].polls[ref.item]]) }
            }
            w.key("poll_stats")
            w.array { w in
                for ref in merge.pollStats { w.raw(parts[ref.second].buffer[parts[ref.second].pollStats[ref.item]]) }
            }
            w.key("questions")
            w.object { w in
                w.key("changed")
                w.array { w in
                    for ref in merge.questionsChanged {
                        w.raw(parts[ref.second].buffer[parts[ref.second].questions[ref.item]])
                    }
                }
                w.key("removed")
                w.strings(merge.questionsRemoved)
            }
            w.feedTail(stored.state, ended: stored.ended)
        }
        return w.bytes
    }

    /// `{room_id, from, to, stream, peer_count, chat, deleted, pinned, reactions,
    /// polls, poll_stats, questions:{changed, removed}, chat_state, ended}`.
    static func encode(_ span: FeedSpan) -> [UInt8] {
        Dispatcher.encode { w in
            w.feedHead(span.roomID, from: span.from, to: span.to, span.state)
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
            w.feedTail(span.state, ended: span.ended)
        }
    }
}

extension JSONWriter {
    /// A feed body's first fields, the same in `encode` and `assemble`:
    /// `room_id`, `from`, `to`, `stream`, `peer_count`.
    mutating func feedHead(_ roomID: RoomID, from: Int64, to: Int64, _ state: FeedState) {
        field("room_id", roomID)
        field("from", from)
        field("to", to)
        key("stream")
        feedStream(state.stream, at: to * 1000)
        field("peer_count", state.peerCount)
    }

    /// A feed body's last fields: `chat_state {paused, slow_mode_s}` and `ended`.
    mutating func feedTail(_ state: FeedState, ended: Bool) {
        key("chat_state")
        object { w in
            w.field("paused", state.paused)
            w.field("slow_mode_s", state.slowModeSeconds)
        }
        field("ended", ended)
    }

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
