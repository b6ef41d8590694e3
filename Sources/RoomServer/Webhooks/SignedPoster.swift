import AsyncHTTPClient
import Crypto
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// The one HTTP client a service thread calls the app's backend with:
/// webhooks (section 17, `WebhookSender`) and `https://` hooks (section 30,
/// `HookClient`) share its connection pool and its signing; an `http://`
/// hook shares its event loop and signing only (`HookConnections`). Every POST is
/// signed the same way (`X-Roomd-Timestamp`, `X-Roomd-Signature`), has one
/// deadline for all of it, and reads at most a given number of bytes of the
/// answer's body. Thread-safe: called from the senders' tasks and the hook
/// client, never waited for on the service thread.
///
/// Each poster (one per service thread) runs on an event loop of its own,
/// one thread: every connection of its pool lives there, so a request and
/// its answer never hop between loops, and the hook client hands the
/// verdicts of one turn of the loop to the service thread together
/// (`HookClient`). With async-http-client's shared group (two loops here)
/// roomd spent ~245 µs of CPU per hooked call at 2,500/s, ~210 now
/// (levers.md). The loop lives as long as the process, as the server does.
final class SignedPoster: Sendable {
    private let client: HTTPClient
    /// The poster's one event loop: its pool's connections, its requests' delegates, their timers.
    let eventLoop: EventLoop
    private let key: SymmetricKey

    /// What one POST got.
    enum Outcome: Sendable {
        /// An answer: its status, and its body when it ended within the byte
        /// cap and the deadline (nil: longer, slower, or cut).
        case answered(status: Int, body: [UInt8]?)
        /// No answer: refused, reset, or no head before the deadline.
        case failed(String)
    }

    /// `connections`: the pool's connections per host (the most calls in flight
    /// at once, so that none waits in the pool for another's); `timeoutMs`: the
    /// client's connect and read timeouts (each POST has its own deadline too).
    init(secret: [UInt8], connections: Int, timeoutMs: Int) {
        key = SymmetricKey(data: secret)
        var configuration = HTTPClient.Configuration()
        let timeout = TimeAmount.milliseconds(Int64(timeoutMs))
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: timeout, read: timeout)
        configuration.redirectConfiguration = .disallow
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        eventLoop = loops.next()
        client = HTTPClient(eventLoopGroup: loops, configuration: configuration)
    }

    /// One signed POST of `body` to `url`, `timeoutMs` for all of it:
    /// connecting (and waiting for a connection), sending, the answer's head,
    /// then at most `limit` bytes of its body. `done` gets the outcome exactly
    /// once, on one of the client's event loops: no task, no timer of ours
    /// (async-http-client's deadline covers the whole request). A body read to
    /// its end keeps the connection for the next call; a longer one, or one
    /// still coming at the deadline, closes it.
    func post(
        _ body: [UInt8],
        to url: String,
        timeoutMs: Int,
        readingUpTo limit: Int,
        then done: @escaping @Sendable (Outcome) -> Void
    ) {
        var headers = HTTPHeaders()
        headers.reserveCapacity(4)
        headers.add(contentsOf: self.headers(for: body))
        let request: HTTPClient.Request
        do {
            request = try HTTPClient.Request(url: url, method: .POST, headers: headers, body: .bytes(body))
        } catch {
            done(.failed("\(error)"))
            return
        }
        let answer = CappedAnswer(limit: limit)
        let task = client.execute(
            request: request,
            delegate: answer,
            deadline: .now() + .milliseconds(Int64(timeoutMs))
        )
        task.futureResult.whenComplete { result in
            // On the task's event loop, where `answer` was written.
            switch result {
            case .success(let bytes):
                done(.answered(status: answer.status ?? 0, body: bytes))
            case .failure(let error):
                if let status = answer.status {
                    done(.answered(status: status, body: nil))  // longer than `limit`, or cut by the deadline
                } else {
                    done(.failed("\(error)"))
                }
            }
        }
    }

    /// `post(_:to:timeoutMs:readingUpTo:then:)` for a task that waits for it.
    func post(_ body: [UInt8], to url: String, timeoutMs: Int, readingUpTo limit: Int) async -> Outcome {
        await withCheckedContinuation { continuation in
            post(body, to: url, timeoutMs: timeoutMs, readingUpTo: limit) { continuation.resume(returning: $0) }
        }
    }

    /// What every POST to the app's backend carries: its type, roomd's name, and
    /// `X-Roomd-Timestamp` (now) and `X-Roomd-Signature` for `body` (section 17).
    func headers(for body: [UInt8]) -> [(String, String)] {
        let timestamp = String(Self.nowMillis())
        return [
            ("Content-Type", "application/json"),
            ("User-Agent", "roomd"),
            ("X-Roomd-Timestamp", timestamp),
            ("X-Roomd-Signature", Self.signature(key: key, timestamp: timestamp, body: body)),
        ]
    }

    /// `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`.
    static func signature(key: SymmetricKey, timestamp: String, body: [UInt8]) -> String {
        var hmac = HMAC<SHA256>(key: key)
        hmac.update(data: Array(timestamp.utf8))
        hmac.update(data: [UInt8(ascii: ".")])
        hmac.update(data: body)
        let digits = Array("0123456789abcdef".utf8)
        var text = Array("sha256=".utf8)
        text.reserveCapacity(text.count + 2 * SHA256.byteCount)
        for byte in hmac.finalize() {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}

/// One answer as `SignedPoster` reads it: the status, and at most `limit`
/// bytes of the body (more fails the request, which closes its connection).
/// async-http-client calls a delegate on its task's event loop only, and the
/// task's result completes there too: that loop owns these fields.
private final class CappedAnswer: HTTPClientResponseDelegate, @unchecked Sendable {
    typealias Response = [UInt8]

    struct TooLong: Error {}

    let limit: Int
    private(set) var status: Int?
    private var bytes: [UInt8] = []

    init(limit: Int) {
        self.limit = limit
    }

    func didReceiveHead(task: HTTPClient.Task<[UInt8]>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        status = Int(head.status.code)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didReceiveBodyPart(task: HTTPClient.Task<[UInt8]>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard bytes.count + buffer.readableBytes <= limit else {
            return task.eventLoop.makeFailedFuture(TooLong())
        }
        bytes.append(contentsOf: buffer.readableBytesView)
        return task.eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<[UInt8]>) throws -> [UInt8] {
        bytes
    }
}
