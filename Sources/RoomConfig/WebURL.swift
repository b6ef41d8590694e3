/// Just enough of RFC 3986 to refuse what is not an http(s) URL:
/// `http[s]://host[:port][/path][?query]`, printable ASCII, no spaces.
public struct WebURL: Sendable, Equatable {
    public var scheme: String
    public var host: String
    public var port: Int?
    /// `host[:port]` as written (a `Host` header's value).
    public var authority: String
    /// The path and query as a request line names them (`/` when the URL has none).
    public var target: String

    public init?(_ text: String) {
        guard Self.isPrintable(text), let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon].lowercased()
        guard scheme == "http" || scheme == "https", text[colon...].hasPrefix("://") else { return nil }
        let rest = text[text.index(colon, offsetBy: 3)...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        var host = Substring(hostPort)
        var port: Int?
        if hostPort.hasPrefix("[") {  // IPv6 literal
            guard let close = hostPort.firstIndex(of: "]") else { return nil }
            host = hostPort[...close]
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":"), let p = Int(after.dropFirst()) else { return nil }
                port = p
            }
        } else if let portColon = hostPort.lastIndex(of: ":") {
            host = hostPort[..<portColon]
            guard let p = Int(hostPort[hostPort.index(after: portColon)...]) else { return nil }
            port = p
        }
        if let port, !(1...65535).contains(port) { return nil }
        let hostCharacters = host.hasPrefix("[") ? host.dropFirst().dropLast() : host
        guard !hostCharacters.isEmpty,
            hostCharacters.allSatisfy({ $0.isLetter || $0.isNumber || "-._~%:".contains($0) })
        else { return nil }
        self.scheme = scheme
        self.host = String(host)
        self.port = port
        self.authority = String(hostPort)
        let pathAndQuery = String(rest.dropFirst(authority.count).prefix { $0 != "#" })
        target = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
    }

    /// Printable ASCII without spaces.
    public static func isPrintable(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy { (0x21...0x7E).contains($0) }
    }
}
