import Foundation
import RoomClient
import RoomServer
import RoomTokens
import RoomWire
import Testing

/// Every token defect of PROTOCOL.md section 8 and its code.
@Suite struct TokenTests {
    @Test func eachTokenDefectHasItsCode() async throws {
        let daemon = try await Daemon.start(
            template: """
                {"roles":{"host":{"subscribeParams":{"subscribeToRoles":["host"]}},"ghost":{"maxPeerCount":-1}}}
                """
        )
        let secret = daemon.secret
        let now = Int(Date().timeIntervalSince1970)
        let cases: [(String, String, Int)] = [
            ("not a JWT", "abc.def", 2004),
            ("four parts", "a.b.c.d", 2004),
            ("bad base64url", "ab$c.def.ghi", 2004),
            (
                "alg none",
                Tokens.make(
                    claims: Tokens.appClaims(),
                    secret: secret,
                    header: #"{"alg":"none","typ":"JWT"}"#,
                    signature: ""
                ), 40109
            ),
            (
                "alg HS512",
                Tokens.make(claims: Tokens.appClaims(), secret: secret, header: #"{"alg":"HS512","typ":"JWT"}"#), 40109
            ),
            (
                "wrong secret",
                Tokens.make(claims: Tokens.appClaims(), secret: Array("another-secret-that-is-long-enough!!".utf8)),
                40109
            ),
            ("tampered signature", Tokens.make(claims: Tokens.appClaims(), secret: secret, signature: "AAAA"), 40109),
            ("missing exp", Tokens.make(claims: Tokens.appClaims(["exp": nil]), secret: secret), 40109),
            ("expired", Tokens.make(claims: Tokens.appClaims(["exp": now - 10]), secret: secret), 40109),
            ("not yet valid", Tokens.make(claims: Tokens.appClaims(["nbf": now + 600]), secret: secret), 40109),
            ("management token", Tokens.make(claims: Tokens.appClaims(["type": "management"]), secret: secret), 40100),
            ("version 1", Tokens.make(claims: Tokens.appClaims(["version": 1]), secret: secret), 40100),
            ("payload not JSON", "eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.c2ln", 40100),
            ("room_id missing", Tokens.make(claims: Tokens.appClaims(["room_id": nil]), secret: secret), 40102),
            ("room_id not a string", Tokens.make(claims: Tokens.appClaims(["room_id": 7]), secret: secret), 40102),
            ("user_id missing", Tokens.make(claims: Tokens.appClaims(["user_id": nil]), secret: secret), 40107),
            ("user_id a number", Tokens.make(claims: Tokens.appClaims(["user_id": 42]), secret: secret), 40107),
            ("unknown role", Tokens.make(claims: Tokens.appClaims(["role": "nosuch"]), secret: secret), 40108),
            ("role maxPeerCount -1", Tokens.make(claims: Tokens.appClaims(["role": "ghost"]), secret: secret), 40108),
        ]
        let client = try await daemon.client()
        for (label, token, code) in cases {
            let failure = try await client.failure("join", ["token": .string(token)])
            #expect(failure.code == code, "\(label): \(failure.message)")
        }
        // A well-formed hand-made token joins: the cases above fail for their defect only.
        _ = try await client.call("join", ["token": .string(Tokens.make(claims: Tokens.appClaims(), secret: secret))])
    }

    /// The claims that are in every push about the peer are bounded (issue
    /// 20): a 40,000-byte `user_id` used to make each of them 40 KB. Both are
    /// refused at `preview` and `join` alike, whatever the `name` param: the
    /// `user_id` with 41300, a `name` claim (section 27: a bad claim) with 40100.
    @Test func userIDAndNameClaimsOverTheirLimitsAreRefusedAtPreviewAndJoin() async throws {
        let daemon = try await Daemon.start(settings: #"{"limits":{"max_name_bytes":100}}"#)
        let secret = daemon.secret
        func token(_ overrides: [String: Any?]) -> JSON {
            .string(Tokens.make(claims: Tokens.appClaims(overrides), secret: secret))
        }
        let cases: [(JSON, Int, String)] = [
            (
                token(["user_id": String(repeating: "u", count: 40_000)]),
                41300,
                "user_id claim: 40000 bytes is over the limit of 256"
            ),
            (
                token(["user_id": String(repeating: "é", count: 129)]),
                41300,
                "user_id claim: 258 bytes is over the limit of 256"
            ),
            (
                token(["name": String(repeating: "n", count: 101)]),
                40100,
                "name claim: 101 bytes is over the limit of 100"
            ),
            (
                token(["name": String(repeating: "n", count: 40_000)]),
                40100,
                "name claim: 40000 bytes is over the limit of 100"
            ),
        ]
        let client = try await daemon.client()
        for (token, code, message) in cases {
            let preview = try await client.failure("preview", ["token": token])
            #expect(preview.code == code && preview.message == message, "preview: \(preview.message)")
            let join = try await client.failure("join", ["token": token, "name": "Ada"])
            #expect(join.code == code && join.message == message, "join: \(join.message)")
        }
        // At the limits: previewed and joined, and the peer carries both whole.
        let userID = String(repeating: "é", count: 128)
        let name = String(repeating: "n", count: 100)
        let atLimits = token(["user_id": userID, "name": name])
        _ = try await client.call("preview", ["token": atLimits])
        let joined = try await client.call("join", ["token": atLimits])
        #expect(joined["peer"]?["info"]?["user_id"] == .string(userID))
        #expect(joined["peer"]?["info"]?["name"] == .string(name))
    }

    @Test func accessKeyMustMatchWhenConfigured() async throws {
        let daemon = try await Daemon.start(arguments: ["--access-key", "app-123"])
        let client = try await daemon.client()
        let without = Tokens.make(claims: Tokens.appClaims(), secret: daemon.secret)
        #expect(try await client.errorCode("join", ["token": .string(without)]) == 40101)
        let wrong = Tokens.make(claims: Tokens.appClaims(["access_key": "app-999"]), secret: daemon.secret)
        #expect(try await client.errorCode("join", ["token": .string(wrong)]) == 40101)
        let right = Tokens.make(claims: Tokens.appClaims(["access_key": "app-123"]), secret: daemon.secret)
        _ = try await client.call("join", ["token": .string(right)])
    }

    @Test func tokensAreNeverLogged() async throws {
        let daemon = try await Daemon.start()
        let token = try daemon.token(user: "a", role: "host")
        let client = try await daemon.client()
        _ = try await client.call("join", ["token": .string(token)])
        _ = try? await client.call("join", ["token": "abc.def"])
        try await Task.sleep(for: .milliseconds(100))
        let log = daemon.stderr
        #expect(log.contains("peer joined"))
        #expect(!log.contains(token.split(separator: ".")[2]), "no token signature in the log")
        #expect(!log.contains(String(decoding: daemon.secret, as: UTF8.self)), "no secret in the log")
    }
}

@Suite struct TokenMinterTests {
    @Test func mintedTimesAreWholeSecondsAndTheHeaderIsHS256() throws {
        let token = try TokenMinter(secret: Daemon.defaultSecret).appToken(room: "r", user: "u", role: "host", ttl: 60)
        let parts = token.split(separator: ".").map { part -> JSON in
            var text = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return (try? JSON.parse(Array(Data(base64Encoded: text) ?? Data()))) ?? .null
        }
        #expect(parts[0] == ["alg": "HS256", "typ": "JWT"])
        for claim in ["iat", "nbf", "exp"] {
            #expect(
                parts[1][claim]?.intValue != nil,
                "\(claim) is an integer, got \(parts[1][claim]?.text ?? "nothing")"
            )
        }
        #expect(parts[1]["exp"]!.intValue! - parts[1]["iat"]!.intValue! == 60)
    }
}
