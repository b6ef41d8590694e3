import RoomModel
import RoomWire

/// The audit log (1.3, PROTOCOL.md section 32): `audit-list {after?, limit?}`.
extension Dispatcher {
    static let defaultAuditLimit = 100
    static let maxAuditLimit = 500

    static var auditMethods: [String: Method] {
        ["audit-list": .joined(Dispatcher.auditList)]
    }

    /// `{entries, next}`: the session's entries after `after`, oldest first,
    /// at most `limit` (100, at most 500) and cut to the chat answer budget
    /// (a quarter of `max_outbound_bytes`, at least one entry); `next` is the
    /// `seq` to pass as `after` for the rest, null at the end.
    func auditList(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let after = try params.int("after", in: 0...Int.max)
        let limit = try params.int("limit", in: 1...Self.maxAuditLimit) ?? Self.defaultAuditLimit
        let page = try registry.auditPage(by: call.peer, after: after, limit: limit, maxBytes: chatAnswerBudget)
        return Self.encode { w in w.auditPage(page) }
    }
}

extension JSONWriter {
    /// `entries` and `next` of an audit page (inside an object).
    mutating func auditPage(_ page: AuditPage) {
        key("entries")
        array { w in for entry in page.entries { w.raw(entry.bytes) } }
        key("next")
        if let next = page.next { int(next) } else { null() }
    }
}
