import RoomWire

extension RoomClient {
    // MARK: - RTMP out and recording (PROTOCOL.md section 23)

    /// Starts RTMP out (`rtmp-start {rtmp_urls, meeting_url?, record?}`);
    /// every peer gets ``RoomEvent/rtmpUpdate(_:)`` (and
    /// ``RoomEvent/recordingUpdate(_:)`` with `record`).
    ///
    /// - Throws: `rpc` with 40300 (the role lacks `rtmpStreaming`, or
    ///   `browserRecording` for `record`), 40904 (already running), -32602
    ///   (not 1 to 3 URLs), 41300 (a URL over 4096 bytes).
    public func startRTMP(
        urls: [String],
        meetingURL: String? = nil,
        record: Bool = false,
        timeout: Duration? = nil
    ) async throws {
        var members: [JSON.Member] = [.init("rtmp_urls", .array(urls.map { .string($0) }))]
        if let meetingURL { members.append(.init("meeting_url", .string(meetingURL))) }
        if record { members.append(.init("record", true)) }
        _ = try await call("rtmp-start", .object(members), timeout: timeout)
    }

    /// Stops RTMP out (`rtmp-stop`), and the recording `record: true` started.
    /// - Throws: `rpc` with 40300, 40904 (not running).
    public func stopRTMP(timeout: Duration? = nil) async throws {
        _ = try await call("rtmp-stop", nil, timeout: timeout)
    }

    /// Starts the recording (`recording-start`).
    /// - Throws: `rpc` with 40300 (the role lacks `browserRecording`), 40904 (running).
    public func startRecording(timeout: Duration? = nil) async throws {
        _ = try await call("recording-start", nil, timeout: timeout)
    }

    /// Stops the recording (`recording-stop`).
    /// - Throws: `rpc` with 40300, 40904 (not running).
    public func stopRecording(timeout: Duration? = nil) async throws {
        _ = try await call("recording-stop", nil, timeout: timeout)
    }

    // MARK: - Token refresh (PROTOCOL.md section 23)

    /// Swaps in a new token of the same user and room (`token-refresh {token}`).
    /// A different role in the token is applied as a forced role change.
    ///
    /// - Returns: The new token's `exp`, ms since the epoch.
    /// - Throws: `rpc` with 40004 (another user), 40002 (another room), or
    ///   the `join` token codes (2004, 40100…, 40109 expired).
    @discardableResult
    public func refreshToken(_ token: String, timeout: Duration? = nil) async throws -> Int64 {
        let result = try await call("token-refresh", ["token": .string(token)], timeout: timeout)
        do {
            return try WireReader(result, path: "token-refresh").int64("expires_at")
        } catch let error as WireError {
            throw RoomClientError.invalidPayload("\(error)")
        }
    }

    /// Keeps this peer's token fresh by itself: at each `on-token-expiring`
    /// it asks `provider` for a new token (your backend mints it) and sends
    /// `token-refresh`. The warnings are taken from the inbox (other pushes
    /// stay). Runs until the connection closes or the task is cancelled (it
    /// holds the client until then). A failed refresh is tried again after
    /// 1, 2, 4 and 8 s; when all fail the token expires (the peer stays in
    /// the room; a resume then needs a fresh token).
    ///
    /// ```swift
    /// let refresher = client.refreshTokens { try await backend.token(for: "ada") }
    /// …
    /// refresher.cancel()
    /// ```
    @discardableResult
    public func refreshTokens(using provider: @escaping @Sendable () async throws -> String) -> Task<Void, Never> {
        Task { [weak self] in
            while let client = self, !client.isClosed, !Task.isCancelled {
                do {
                    _ = try await client.next("on-token-expiring", timeout: .seconds(3600))
                } catch {
                    continue  // a timeout; or closed, which the loop sees
                }
                for delay in [0, 1, 2, 4, 8] {
                    if delay > 0 { try? await Task.sleep(for: .seconds(delay)) }
                    if client.isClosed || Task.isCancelled { return }
                    do {
                        try await client.refreshToken(try await provider())
                        break
                    } catch {
                        continue
                    }
                }
            }
        }
    }
}
