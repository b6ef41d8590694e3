import RoomWire

extension RoomClient {
    // MARK: - Live stream (PROTOCOL.md section 16)

    /// Starts the room's HLS stream (`hls-start {variants?}`).
    ///
    /// Every peer, this one included, gets ``RoomEvent/hlsUpdate(_:)`` with
    /// `running` true; each variant's `url` is the daemon's playlist URL.
    ///
    /// - Parameter variants: 1 to 8 outputs; nil asks for one default variant.
    /// - Throws: `rpc` with 40300 (the role lacks `hlsStreaming`, or a
    ///   `view_and_polls_only` token), 40904 (already running), 41300
    ///   (`meeting_url` or `metadata` over 4096 bytes), -32602.
    public func startHLSStreaming(variants: [HLSVariantRequest]? = nil, timeout: Duration? = nil) async throws {
        var members: [JSON.Member] = []
        if let variants {
            members.append(
                .init(
                    "variants",
                    .array(
                        variants.map { variant in
                            .object(
                                [
                                    variant.meetingURL.map { .init("meeting_url", .string($0)) },
                                    variant.metadata.map { .init("metadata", .string($0)) },
                                ].compactMap { $0 }
                            )
                        }
                    )
                )
            )
        }
        _ = try await call("hls-start", .object(members), timeout: timeout)
    }

    /// Stops the room's HLS stream (`hls-stop`).
    ///
    /// Every peer gets ``RoomEvent/hlsUpdate(_:)`` with `running` false.
    ///
    /// - Throws: `rpc` with 40300, 40904 (not running).
    public func stopHLSStreaming(timeout: Duration? = nil) async throws {
        _ = try await call("hls-stop", nil, timeout: timeout)
    }

    /// Sends timed metadata into the running stream (`hls-timed-metadata
    /// {metadata_objs}`): each object becomes a cue from now to now +
    /// `duration`; every peer gets ``RoomEvent/hlsTimedMetadata(_:)``, and
    /// late joiners find live cues in `room.hls.cues`.
    ///
    /// - Parameter metadata: 1 to 20 objects.
    /// - Returns: The cues, in order.
    /// - Throws: `rpc` with 40300, 40904 (stream not running), 40907 (too many
    ///   live cues in the room), 41300 (payload over 4096 bytes), -32602
    ///   (count, duration outside 1...3600).
    @discardableResult
    public func sendHLSTimedMetadata(
        _ metadata: [HLSTimedMetadata],
        timeout: Duration? = nil
    ) async throws
        -> [HLSCue]
    {
        let objects: [JSON] = metadata.map {
            .object([.init("payload", .string($0.payload)), .init("duration", .int($0.duration))])
        }
        let result = try await call(
            "hls-timed-metadata",
            .object([.init("metadata_objs", .array(objects))]),
            timeout: timeout
        )
        do {
            return try WireReader(result, path: "").elements("cues").map { try HLSCue($0) }
        } catch let error as WireError {
            throw RoomClientError.invalidPayload("hls-timed-metadata result: \(error)")
        }
    }
}
