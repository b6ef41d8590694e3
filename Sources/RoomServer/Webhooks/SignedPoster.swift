import AsyncHTTPClient
import Crypto
import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// The one HTTP client a service thread calls the app's backend with:
/// webhooks (section 17, `WebhookSender`) and hooks (section 30,
/// `HookClient`) share its connection pool and its signing. Every POST is
/// signed the same way (`X-Roomd-Timestamp`, `X-Roomd-Signature`), has one
/// deadline for all of it, and reads at most a given number of bytes of the
/// answer's body. Thread-safe: called from the senders' tasks, never from the
/// service thread.
final class SignedPoster: Sendable {
    private let client: HTTPClient
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
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }

    /// One signed POST of `body` to `url`, `timeoutMs` for all of it:
    /// connecting (and waiting for a connection), sending, the answer's head,
    /// then at most `limit` bytes of its body. A body read to its end keeps
    /// the connection for the next call; a longer one, or one still coming at
    /// the deadline, closes it.
    func post(_ body: [UInt8], to url: String, timeoutMs: Int, readingUpTo limit: Int) async -> Outcome {
        // One deadline: the client's ends with the answer's head, the body has the rest.
        let deadline = ContinuousClock.now + .milliseconds(timeoutMs)
        let headDeadline = NIODeadline.now() + .milliseconds(Int64(timeoutMs))
        let timestamp = String(Self.nowMillis())
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "User-Agent", value: "roomd")
        request.headers.add(name: "X-Roomd-Timestamp", value: timestamp)
        request.headers.add(
            name: "X-Roomd-Signature",
            value: Self.signature(key: key, timestamp: timestamp, body: body)
        )
        request.body = .bytes(body)
        do {
            let response = try await client.execute(request, deadline: headDeadline)
            let read = await Self.read(response.body, upTo: limit, until: deadline)
            return .answered(status: Int(response.status.code), body: read)
        } catch {
            return .failed("\(error)")
        }
    }

    /// Reads `body` until its end, more than `limit` bytes, or `deadline`,
    /// whichever comes first: the bytes when it ended, else nil (never more
    /// than `limit` bytes are kept). Stopping early ends the request: the
    /// client closes its connection.
    static func read(
        _ body: HTTPClientResponse.Body,
        upTo limit: Int,
        until deadline: ContinuousClock.Instant
    ) async -> [UInt8]? {
        await withTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var bytes: [UInt8] = []
                do {
                    for try await chunk in body {
                        if bytes.count + chunk.readableBytes > limit { return nil }
                        bytes.append(contentsOf: chunk.readableBytesView)
                    }
                    return bytes
                } catch {
                    return nil  // the connection failed, or the deadline cancelled the read
                }
            }
            group.addTask {
                try? await Task.sleep(until: deadline)
                return nil
            }
            let ended = await group.next() ?? nil
            group.cancelAll()
            return ended
        }
    }

    /// `sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>`.
    static func signature(key: SymmetricKey, timestamp: String, body: [UInt8]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Array(timestamp.utf8) + [UInt8(ascii: ".")] + body, using: key)
        return "sha256="
            + mac.map { byte in
                let hex = String(byte, radix: 16)
                return byte < 16 ? "0" + hex : hex
            }.joined()
    }

    static func nowMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
