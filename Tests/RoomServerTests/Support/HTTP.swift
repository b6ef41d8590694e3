import RoomTokens
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import RoomWire

/// One HTTP request to the daemon; returns the status and the parsed JSON body (or the text as a string).
func http(_ method: String, _ daemon: Daemon, _ path: String, token: String? = nil, body: String? = nil)
    async throws -> (status: Int, body: JSON)
{
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.port)\(path)")!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let body {
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let (data, response) = try await URLSession.shared.data(for: request)
    let status = (response as! HTTPURLResponse).statusCode
    let parsed = (try? JSON.parse(Array(data))) ?? .string(String(decoding: data, as: UTF8.self))
    return (status, parsed)
}

extension Daemon {
    func managementToken() throws -> String {
        try TokenMinter(secret: secret).managementToken()
    }
}

import RoomServer
