/// The links of a text (1.3, PROTOCOL.md section 31): `http://`,
/// `https://` or `www.` followed by a host, compared case-insensitively;
/// bare `host.tld` text is not a link. One pass over the text's bytes
/// (a chat line is at most `max_chat_bytes`), no allocation but the hosts.
enum Links {
    /// The hosts of the text's links, lower-cased, in order.
    static func hosts(in text: String) -> [String] {
        let bytes = Array(text.utf8)
        var hosts: [String] = []
        var index = 0
        while index < bytes.count {
            // A link starts a token: at the text's start or after a byte that is not part of a host.
            if index > 0, isHostByte(bytes[index - 1]) {
                index += 1
                continue
            }
            if let start = linkStart(bytes, at: index) {
                let (host, end) = host(bytes, from: start)
                if !host.isEmpty { hosts.append(host) }
                index = max(end, index + 1)
            } else {
                index += 1
            }
        }
        return hosts
    }

    /// Where the authority of a link starting at `index` begins, if one does.
    private static func linkStart(_ bytes: [UInt8], at index: Int) -> Int? {
        for scheme in schemes where hasPrefix(bytes, at: index, scheme) {
            let after = index + scheme.count
            // A host must follow: at least one byte of a label.
            guard after < bytes.count, isHostByte(bytes[after]), bytes[after] != UInt8(ascii: ".") else { return nil }
            // `www.` keeps its label in the host (it is part of the name).
            return scheme == www ? index : after
        }
        return nil
    }

    /// The host of an authority (userinfo and port dropped), lower-cased,
    /// without a trailing dot, and the index after the authority.
    private static func host(_ bytes: [UInt8], from start: Int) -> (String, Int) {
        var end = start
        while end < bytes.count, !isAuthorityEnd(bytes[end]) { end += 1 }
        var from = start
        if let at = bytes[start..<end].lastIndex(of: UInt8(ascii: "@")) { from = at + 1 }
        var to = from
        while to < end, isHostByte(bytes[to]) { to += 1 }
        var host = bytes[from..<to].map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }
        while host.last == UInt8(ascii: ".") { host.removeLast() }
        return (String(decoding: host, as: UTF8.self), end)
    }

    /// Whether `host` is one of `domains` or a subdomain of one: each suffix
    /// after a dot is looked up once (O(labels)).
    static func isBlocked(_ host: String, by domains: Set<String>) -> Bool {
        var rest = Substring(host)
        while !rest.isEmpty {
            if domains.contains(String(rest)) { return true }
            guard let dot = rest.firstIndex(of: ".") else { return false }
            rest = rest[rest.index(after: dot)...]
        }
        return false
    }

    private static let www = Array("www.".utf8)
    private static let schemes = [Array("https://".utf8), Array("http://".utf8), www]

    private static func hasPrefix(_ bytes: [UInt8], at index: Int, _ prefix: [UInt8]) -> Bool {
        guard bytes.count - index >= prefix.count else { return false }
        for offset in prefix.indices {
            var byte = bytes[index + offset]
            if byte >= 0x41 && byte <= 0x5A { byte += 0x20 }
            if byte != prefix[offset] { return false }
        }
        return true
    }

    /// Letters, digits, `-`, `.` and any non-ASCII byte (an IDN host's UTF-8).
    private static func isHostByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
            || (byte >= 0x61 && byte <= 0x7A) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// The authority ends at a path, query, fragment, white space, or a quote or bracket around the link.
    private static func isAuthorityEnd(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: " "), UInt8(ascii: "\t"),
            UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "<"),
            UInt8(ascii: ">"), UInt8(ascii: ")"), UInt8(ascii: "]"), UInt8(ascii: ","):
            true
        default: false
        }
    }
}
