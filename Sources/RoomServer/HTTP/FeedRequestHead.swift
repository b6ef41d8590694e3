/// The feed requests roomd reads itself (RequestHeads.swift): a plain
/// HTTP/1.1 `GET /v2/rooms/{room_id}/feed?…` whose head says nothing that
/// libwebsockets would read differently. Anything else — another route or
/// method, HTTP/1.0, `Connection: close`, an upgrade, a body, a repeated
/// header roomd reads, a target with `%`, `+`, `//` or a dot segment (lws
/// decodes and normalizes those), over 16 query arguments — is nil here and
/// goes to lws with its socket, which serves it as it always did. So a
/// request gets the same answer on either path; only the time differs
/// (`make bench` (m), docs/BENCHMARKS.md).
///
/// Pure: the bytes of one complete head (`RequestHeads.endOfHead`).
enum FeedRequestHead {
    /// At most this many `?name=value` arguments (lws' `queryArguments` reads 16).
    static let maxArguments = 16

    /// The request, or nil when lws must read it.
    static func parse(_ head: UnsafeRawBufferPointer, socket: Int32) -> HTTPRequest? {
        // The request line: "GET SP target SP HTTP/1.1 CRLF".
        guard head.count > 16, head.starts(with: get), let lineEnd = endOfLine(head, from: 0) else { return nil }
        let line = UnsafeRawBufferPointer(rebasing: head[get.count..<lineEnd])
        guard line.count > version.count, line.reversed().starts(with: version.reversed()) else { return nil }
        let target = UnsafeRawBufferPointer(rebasing: line[..<(line.count - version.count)])
        guard let (path, arguments) = split(target) else { return nil }
        guard RestFeed.roomID(in: path) != nil else { return nil }

        var authorization: String?
        var ifNoneMatch: String?
        var hasHost = false
        var seenAuthorization = false
        var seenIfNoneMatch = false
        var index = lineEnd + 2
        while index < head.count {
            guard let end = endOfLine(head, from: index) else { return nil }
            if end == index { break }  // the empty line
            let field = UnsafeRawBufferPointer(rebasing: head[index..<end])
            index = end + 2
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")), colon > 0,
                field[..<colon].allSatisfy(isToken)
            else { return nil }  // obs-fold, a space before the colon, no colon
            // lws skips the spaces before a value, not a tab, and keeps trailing ones: such heads go to lws.
            var valueStart = colon + 1
            while valueStart < field.count, field[valueStart] == space { valueStart += 1 }
            let value = UnsafeRawBufferPointer(rebasing: field[valueStart...])
            if value.first == tab { return nil }
            if let last = value.last, last == space || last == tab { return nil }
            let name = UnsafeRawBufferPointer(rebasing: field[..<colon])
            if named(name, "authorization") {
                guard !seenAuthorization else { return nil }  // lws joins repeats
                seenAuthorization = true
                if !value.isEmpty { authorization = String(decoding: value, as: UTF8.self) }  // lws: none
            } else if named(name, "if-none-match") {
                guard !seenIfNoneMatch else { return nil }
                seenIfNoneMatch = true
                if !value.isEmpty { ifNoneMatch = String(decoding: value, as: UTF8.self) }
            } else if named(name, "host") {
                hasHost = true
            } else if named(name, "connection") {
                let tokens = String(decoding: value.map(lowercase), as: UTF8.self)
                if tokens.contains("close") || tokens.contains("upgrade") { return nil }
            } else if refused.contains(where: { named(name, $0) }) {
                return nil
            }
        }
        guard hasHost else { return nil }
        let request = HTTPRequest(method: .get, path: path, authorization: authorization)
        request.query = arguments
        request.ifNoneMatch = ifNoneMatch
        request.socket = socket
        return request
    }

    /// The path and the arguments of a target whose bytes need no decoding.
    private static func split(_ target: UnsafeRawBufferPointer) -> (String, [String: String])? {
        guard target.first == slash, target.allSatisfy(isPlain) else { return nil }
        let question = target.firstIndex(of: UInt8(ascii: "?")) ?? target.count
        let path = UnsafeRawBufferPointer(rebasing: target[..<question])
        // No empty or dot segment: lws would merge or resolve it.
        for (offset, byte) in path.enumerated() where byte == slash && offset + 1 < path.count {
            if path[offset + 1] == slash || path[offset + 1] == UInt8(ascii: ".") { return nil }
        }
        var arguments: [String: String] = [:]
        if question < target.count {
            let query = UnsafeRawBufferPointer(rebasing: target[(question + 1)...])
            let fragments = query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
            guard fragments.count <= maxArguments else { return nil }
            for fragment in fragments {
                guard !fragment.isEmpty, !fragment.contains(UInt8(ascii: "?")) else { return nil }
                let equals = fragment.firstIndex(of: UInt8(ascii: "=")) ?? fragment.endIndex
                let name = String(decoding: fragment[..<equals], as: UTF8.self)
                if arguments[name] == nil {
                    arguments[name] =
                        equals < fragment.endIndex
                        ? String(decoding: fragment[(equals + 1)...], as: UTF8.self) : ""
                }
            }
        }
        return (String(decoding: path, as: UTF8.self), arguments)
    }

    /// The index of the CR of the CRLF that ends the line starting at `start`
    /// (a bare LF is nil: lws reads those its own way).
    private static func endOfLine(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var index = start
        while index + 1 < bytes.count {
            if bytes[index] == UInt8(ascii: "\r") { return bytes[index + 1] == UInt8(ascii: "\n") ? index : nil }
            if bytes[index] == UInt8(ascii: "\n") { return nil }
            index += 1
        }
        return nil
    }

    /// Whether a header name is `lower` (ASCII, any case).
    private static func named(_ name: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
        guard name.count == lower.utf8CodeUnitCount else { return false }
        let expected = UnsafeRawBufferPointer(start: lower.utf8Start, count: lower.utf8CodeUnitCount)
        return zip(name, expected).allSatisfy { lowercase($0) == $1 }
    }

    private static func lowercase(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Headers that send a request to lws: an upgrade, a body, an expectation.
    private static let refused: [StaticString] = [
        "upgrade", "content-length", "transfer-encoding", "expect", "http2-settings",
    ]

    /// A target byte that lws passes on as it is: letters, digits, `-`, `.`,
    /// `_`, `~`, `/`, `?`, `&`, `=`, `:`, `@`. Not `%` (lws decodes it), `+`
    /// (a space in arguments), `#`, nor anything else: those requests go to lws.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"),
            UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"):
            true
        default: false
        }
    }

    /// A header name's byte (RFC 9110 token).
    private static func isToken(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "!"), UInt8(ascii: "#"),
            UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"),
            UInt8(ascii: "+"), UInt8(ascii: "^"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static let get = Array("GET ".utf8)
    private static let version = Array(" HTTP/1.1".utf8)
    private static let slash = UInt8(ascii: "/")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
}
