import RoomModel
import RoomProtocol
import RoomWire

/// REST of reports (1.3, PROTOCOL.md section 32): `GET
/// /v2/active-rooms/{room_id}/reports?status=open|resolved&offset=&limit=`
/// (default open) → `{reports:[Report…], total, more?}`, oldest first, and
/// `POST …/reports/{report_id}/resolve {note?}` → `{report}`, as
/// `report-resolve` (every `moderateChat` peer gets `on-report-update`,
/// `resolved_by` the server PeerRef).
extension RestAPI {
    func reports(
        _ roomID: RoomID,
        _ parts: ArraySlice<String>,
        _ request: HTTPRequest
    ) throws(RoomError)
        -> HTTPResponse?
    {
        switch (request.method, parts.count) {
        case (.get, 0): return try listReports(roomID, request)
        case (.post, 2) where parts.last == "resolve": return try resolveReport(roomID, parts.first!, try body(request))
        default: return nil
        }
    }

    /// From `offset` (0), at most `limit` (1–1,000, default 100), cut to the
    /// list budget (`more: true`); `total` counts the reports of that status.
    private func listReports(_ roomID: RoomID, _ request: HTTPRequest) throws(RoomError) -> HTTPResponse {
        let room = try room(roomID)
        let query = Params(.object(request.query.map { JSON.Member($0.key, .string($0.value)) }))
        let status = try query.choice("status", ReportStatus.self) ?? .open
        let offset = try Self.queryInt(request, "offset", in: 0...Int.max) ?? 0
        let limit = try Self.queryInt(request, "limit", in: 1...1000) ?? 100
        let reports = registry.reports(in: room, status: status)
        let page = Array(reports.dropFirst(offset).prefix(limit))
        let budget = listBudget
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("reports")
                let cut = w.leadingArray(page, within: budget, size: Self.encodedSize) { $0.report($1) }
                w.field("total", reports.count)
                if cut { w.field("more", true) }
            }
        )
    }

    private static func encodedSize(_ report: Report) -> Int {
        var w = JSONWriter(reserving: report.reason.utf8.count + (report.note?.utf8.count ?? 0) + 512)
        w.report(report)
        return w.bytes.count
    }

    private func resolveReport(_ roomID: RoomID, _ id: String, _ params: Params) throws(RoomError) -> HTTPResponse {
        let (report, deliveries) = try registry.resolveReport(
            id,
            note: try params.string("note"),
            by: .server,
            in: try room(roomID)
        )
        fanOut.fanOut(deliveries)
        logger.info("report resolved", metadata: ["room": "\(roomID)", "report": "\(id.prefix(64))", "by": "rest"])
        return .json(
            200,
            encoded: Dispatcher.encode { w in
                w.key("report")
                w.report(report)
            }
        )
    }
}
