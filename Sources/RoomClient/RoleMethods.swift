import RoomWire

// Role changes (PROTOCOL.md section 6): polite, forced and bulk, and the
// answers to them. Same conventions as Methods.swift.

extension RoomClient {
    // MARK: - Roles

    /// Asks (or forces) one peer to change role (`role-change-request
    /// {requested_for, role, force}`). Needs the `changeRole` permission.
    ///
    /// Polite (`force: false`): the target gets `on-role-change-request
    /// {requested_by, role, token}` and answers with
    /// ``acceptRoleChange(token:timeout:)`` or ``rejectRoleChange(token:timeout:)``;
    /// this peer gets `on-role-change-rejected` if it is rejected or expires.
    /// Forced: applied at once (`on-policy-change` to the target,
    /// `on-peer-update {changed:["role"]}` to everyone).
    ///
    /// - Returns: The request's token for a polite request; nil when forced,
    ///   or when the target already has `role` (nothing is sent then).
    /// - Throws: `rpc` with 40300 (no `changeRole`), 40400 (no such peer),
    ///   40402 (role not in the template), 40900 (role limit), -32602.
    @discardableResult
    public func requestRoleChange(
        for peerID: String,
        to role: String,
        force: Bool = false,
        timeout: Duration? = nil
    ) async throws -> String? {
        let result = try await call(
            "role-change-request",
            ["requested_for": .string(peerID), "role": .string(role), "force": .bool(force)],
            timeout: timeout
        )
        return try decode("role-change-request", result) { try WireReader($0, path: "").optionalString("token") }
    }

    /// Moves every peer whose role is in `roles` to `role`, forced, all or
    /// nothing (`role-change-request {roles, role, force:true}`), the caller
    /// included if its role is listed. Needs `changeRole`.
    ///
    /// - Returns: The peer ids that changed.
    /// - Throws: `rpc` with 40300, 40402, 40900 (role limit), 40902 (`role`
    ///   is one of `roles`), -32602 (`roles` empty).
    @discardableResult
    public func changeRoles(
        _ roles: [String],
        to role: String,
        timeout: Duration? = nil
    ) async throws
        -> [String]
    {
        let result = try await call(
            "role-change-request",
            ["roles": .array(roles.map(JSON.string)), "role": .string(role), "force": true],
            timeout: timeout
        )
        return try decode("role-change-request", result) { try WireReader($0, path: "").strings("changed") }
    }

    /// Accepts a polite role change addressed to this peer (`role-change {token}`).
    ///
    /// This peer gets `on-policy-change`; everyone gets `on-peer-update
    /// {changed:["role"]}`; tracks the new role may not publish are removed.
    ///
    /// - Returns: This peer with its new role.
    /// - Throws: `rpc` with 40403 (token unknown, used, expired or not this
    ///   peer's), 40900 (role limit reached meanwhile).
    @discardableResult
    public func acceptRoleChange(token: String, timeout: Duration? = nil) async throws -> Peer {
        let result = try await call("role-change", ["token": .string(token)], timeout: timeout)
        return try decode("role-change", result) { try Peer(WireReader($0["peer"], path: "peer")) }
    }

    /// Rejects a polite role change addressed to this peer (`role-change-reject {token}`).
    ///
    /// The requester gets `on-role-change-rejected {…, reason:"rejected"}`.
    ///
    /// - Throws: `rpc` with 40403.
    public func rejectRoleChange(token: String, timeout: Duration? = nil) async throws {
        _ = try await call("role-change-reject", ["token": .string(token)], timeout: timeout)
    }
}
