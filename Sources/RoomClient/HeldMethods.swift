import RoomWire

// Messages held for review (1.3, PROTOCOL.md section 31): the moderators'
// side. Same conventions as ChatModerationMethods.swift.

extension RoomClient {
    /// The messages `settings.chat.hold` stopped, oldest first (`held-list`,
    /// `moderateChat`); `more` when newer ones did not fit in one answer.
    ///
    /// - Throws: `rpc` with 40300.
    public func heldMessages(timeout: Duration? = nil) async throws -> (messages: [Message], more: Bool) {
        let result = try await call("held-list", nil, timeout: timeout)
        return try decode("held-list", result) {
            let r = WireReader($0, path: "")
            return (try r.elements("messages").map { try Message(kept: $0) }, try r.optionalBool("more") ?? false)
        }
    }

    /// Sends a held message to everyone now (`message-approve`,
    /// `moderateChat`); its sender hears `on-message-review` (approved).
    ///
    /// - Throws: `rpc` with 40300, 40405 (not held).
    public func approveMessage(_ messageID: String, timeout: Duration? = nil) async throws {
        _ = try await call("message-approve", ["message_id": .string(messageID)], timeout: timeout)
    }

    /// Drops a held message (`message-reject`, `moderateChat`); its sender
    /// hears `on-message-review` (rejected, with `reason`).
    ///
    /// - Throws: `rpc` with 40300, 40405 (not held), 41300 (reason over 256 bytes).
    public func rejectMessage(_ messageID: String, reason: String? = nil, timeout: Duration? = nil) async throws {
        var params: [JSON.Member] = [.init("message_id", .string(messageID))]
        if let reason { params.append(.init("reason", .string(reason))) }
        _ = try await call("message-reject", .object(params), timeout: timeout)
    }
}
