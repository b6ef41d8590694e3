/// `settings.cluster` (PROTOCOL.md section 18). Read by the transport only:
/// the domain never sees the cluster.
public struct ClusterSettings: Sendable, Equatable {
    /// `nats_url`: `nats://HOST:PORT` of the cluster's bus; nil = a single daemon.
    /// `roomd --cluster` overrides it.
    public var natsURL: String?

    public init(natsURL: String? = nil) {
        self.natsURL = natsURL
    }

    /// Why `url` is not a usable `nats://HOST:PORT`, or nil when it is. HOST
    /// is a name or IPv4 address (`[A-Za-z0-9.-]`) or a bracketed IPv6
    /// address; PORT is 1...65535; nothing else (no user, path or query).
    public static func natsURLProblem(_ url: String) -> String? {
        let expected = "expected nats://HOST:PORT, got \"\(url.prefix(200))\""
        guard url.hasPrefix("nats://"), url.utf8.count <= 300 else { return expected }
        let rest = url.dropFirst("nats://".count)
        guard let colon = rest.lastIndex(of: ":") else { return expected }
        let host = rest[..<colon]
        let port = rest[rest.index(after: colon)...]
        let hostOK: Bool
        if host.hasPrefix("[") {
            hostOK =
                host.count > 2 && host.hasSuffix("]")
                && host.dropFirst().dropLast().allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        } else {
            hostOK =
                !host.isEmpty
                && host.utf8.allSatisfy { b in
                    switch b {
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"):
                        true
                    default: false
                    }
                }
        }
        guard hostOK else { return expected }
        guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
            let number = Int(port), (1...65535).contains(number)
        else {
            return "port: must be between 1 and 65535 in \"\(url.prefix(200))\""
        }
        return nil
    }
}

extension ClusterSettings {
    init(_ c: TemplateCursor) throws(TemplateError) {
        self.init()
        let url = try c.string("nats_url", default: "")
        if url.isEmpty { return }
        if let problem = Self.natsURLProblem(url) {
            c.report(c.path("nats_url"), problem)
        } else {
            natsURL = url
        }
    }
}
