import Foundation
import RoomServer
import RoomTokens
import RoomWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request to the daemon; returns the status and the parsed JSON body (or the text as a string).
func http(
    _ method: String,
    _ daemon: Daemon,
    _ path: String,
    token: String? = nil,
    body: String? = nil
)
    async throws -> (status: Int, body: JSON)
{
    var request = URLRequest(url: URL(string: "http://127.0.0.1:\(daemon.port)\(path)")!)
    request.httpMethod = method
    if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
    if let body {
        request.httpBody = Data(body.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let data: Data
    let response: URLResponse
    do {
        (data, response) = try await URLSession.shared.data(for: request)
    } catch {
        // Which request, and URLSession's own words (a kept-alive connection
        // lost, a timeout), in the test's failure.
        throw HTTPRequestFailed(description: "\(method) \(path): \(error)")
    }
    let status = (response as! HTTPURLResponse).statusCode
    let parsed = (try? JSON.parse(Array(data))) ?? .string(String(decoding: data, as: UTF8.self))
    return (status, parsed)
}

extension Daemon {
    /// `/metrics`; in a cluster run every node's, each series summed over
    /// the nodes (what an operator's dashboard shows for the cluster).
    func metricsText() async throws -> String {
        if nodes.isEmpty { return try await http("GET", self, "/metrics").body.stringValue ?? "" }
        var order: [String] = []
        var sums: [String: Double] = [:]
        for node in nodes {
            let text = try await http("GET", node, "/metrics").body.stringValue ?? ""
            for line in text.split(separator: "\n").map(String.init) {
                if line.hasPrefix("#") {
                    if !order.contains(line) { order.append(line) }
                    continue
                }
                guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                    continue
                }
                let series = String(line[..<space])
                if sums[series] == nil { order.append(series) }
                sums[series, default: 0] += value
            }
        }
        return order.map { line in
            guard let sum = sums[line] else { return line }
            return "\(line) \(sum == sum.rounded() && abs(sum) < 1e15 ? String(Int(sum)) : String(sum))"
        }.joined(separator: "\n") + "\n"
    }

    func managementToken() throws -> String {
        try TokenMinter(secret: secret).managementToken()
    }
}

/// A test's HTTP request that got no answer: which one, and why.
struct HTTPRequestFailed: Error, CustomStringConvertible {
    let description: String
}
