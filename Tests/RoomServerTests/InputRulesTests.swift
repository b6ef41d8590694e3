import Foundation
import RoomClient
import RoomWire
import Testing

/// Bounds at every input and moderation rules that hold (issue 34, items 5, 6
/// and 8), over real sockets: `user_id` at most 256 bytes wherever a call or a
/// REST body names a user; the word filter after NFKC, case folding, removed
/// format characters, a homoglyph fold and folded separators, on messages,
/// questions and names; a chat ban that also stops renames, metadata and group
/// joins; a moderator that cannot act on a moderating peer who ranks above it;
/// and `roomd replay` refusing a journal it cannot check.
@Suite struct InputRulesTests {
    // MARK: user_id bounds (item 5)

    @Test func aUserIDOverTheClaimsBoundIsRefusedWhereverAUserIsNamed() async throws {
        let stage = try await Stage()
        let long = JSON.string(String(repeating: "u", count: 257))
        let multiByte = JSON.string(String(repeating: "é", count: 129))  // 258 bytes, 129 characters
        for method in ["peer-ban", "peer-unban", "chat-ban", "chat-unban"] {
            for id in [long, multiByte] {
                let refused = try await stage.host.failure(method, ["user_id": id])
                #expect(refused.code == 41300, "\(method)")
                #expect(refused.message.hasPrefix("user_id: ") && refused.message.contains("over the limit of 256"))
            }
        }
        let fits = JSON.string(String(repeating: "u", count: 256))
        #expect(try await stage.host.call("peer-ban", ["user_id": fits]) == [:], "256 bytes is a user id")
        #expect(try await stage.host.call("chat-ban", ["user_id": fits]) == [:])
        let admin = try stage.daemon.managementToken()
        let body = #"{"user_id":"\#(String(repeating: "r", count: 60_000))"}"#
        for path in ["ban", "unban"] {
            let rest = try await http("POST", stage.daemon, "/v2/active-rooms/room-1/\(path)", token: admin, body: body)
            #expect(rest.status == 413 && rest.body["code"] == 41300, "\(path): \(rest.body)")
            #expect(rest.body["message"]?.stringValue?.hasPrefix("user_id: 60000 bytes") == true)
        }
        let bans = try await http("GET", stage.daemon, "/v2/active-rooms/room-1/bans", token: admin)
        #expect(bans.body["bans"]?.arrayValue?.map { $0["user_id"] } == [fits], "only the one that fits")
    }

    static func failure(
        _ client: RoomClient,
        _ method: String,
        _ params: JSON
    ) async throws -> (
        code: Int, message: String
    ) {
        do {
            let result = try await client.call(method, params)
            throw DaemonError(description: "\(method) succeeded unexpectedly: \(result)")
        } catch RoomClientError.rpc(let code, let message, _) {
            return (code, message)
        }
    }
}
