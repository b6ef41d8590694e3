import RoomWire

/// A REST request and its answer as they cross the bus (NATS request/reply)
/// between the node a client asked and the room's home: JSON, the body as a
/// string (REST bodies are JSON text).
enum ForwardedHTTP {
    static let unavailable = HTTPResponse.error(
        503,
        code: 5003,
        "cluster unavailable: the room's home node cannot be reached, try again later"
    )

    static func encode(_ request: HTTPRequest) -> [UInt8] {
        var members: [JSON.Member] = [
            JSON.Member("method", .string(request.method.rawValue)),
            JSON.Member("path", .string(request.path)),
            JSON.Member(
                "query",
                .object(request.query.sorted { $0.key < $1.key }.map { JSON.Member($0.key, .string($0.value)) })
            ),
            JSON.Member("body", .string(String(decoding: request.body, as: UTF8.self))),
        ]
        if let authorization = request.authorization {
            members.append(JSON.Member("authorization", .string(authorization)))
        }
        return JSON.object(members).bytes
    }

    static func decodeRequest(_ bytes: [UInt8]) -> HTTPRequest? {
        guard let json = try? JSON.parse(bytes), let methodName = json["method"]?.stringValue,
            let method = HTTPRequest.Method(rawValue: methodName), let path = json["path"]?.stringValue
        else { return nil }
        let request = HTTPRequest(method: method, path: path, authorization: json["authorization"]?.stringValue)
        for member in json["query"]?.objectValue ?? [] {
            if let value = member.value.stringValue { request.query[member.key] = value }
        }
        request.body = Array((json["body"]?.stringValue ?? "").utf8)
        request.expected = request.body.count
        return request
    }

    static func encode(_ response: HTTPResponse) -> [UInt8] {
        JSON.object([
            JSON.Member("status", .int(response.status)),
            JSON.Member("type", .string(response.contentType)),
            JSON.Member("body", .string(String(decoding: response.body, as: UTF8.self))),
        ]).bytes
    }

    static func decodeResponse(_ bytes: [UInt8]) -> HTTPResponse? {
        guard let json = try? JSON.parse(bytes), let status = json["status"]?.intValue,
            let type = json["type"]?.stringValue, let body = json["body"]?.stringValue
        else { return nil }
        return HTTPResponse(status: status, body: Array(body.utf8), contentType: type)
    }

    /// Merges this node's page of the room list with the other nodes'
    /// (each sorted by id, each at most `limit` rooms): one page, as one
    /// daemon holding every room would answer.
    static func mergeLists(_ pages: [[UInt8]], limit: Int) -> HTTPResponse {
        var rooms: [(id: String, room: JSON)] = []
        var more = false
        for page in pages {
            guard let json = try? JSON.parse(page), let list = json["rooms"]?.arrayValue else { continue }
            if json["last"] != nil, json["last"] != .null { more = true }
            for room in list { if let id = room["room_id"]?.stringValue { rooms.append((id, room)) } }
        }
        rooms.sort { $0.id < $1.id }
        if rooms.count > limit { more = true }
        let kept = rooms.prefix(limit)
        return .json(
            200,
            .object([
                JSON.Member("rooms", .array(kept.map(\.room))),
                JSON.Member("last", more && !kept.isEmpty ? .string(kept.last!.id) : .null),
            ])
        )
    }
}
