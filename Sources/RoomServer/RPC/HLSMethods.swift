import RoomModel
import RoomProtocol
import RoomWire

/// `hls-start`, `hls-stop`, `hls-timed-metadata` (PROTOCOL.md section 16).
/// The REST API (`…/hls/start|stop|timed-metadata`) decodes with the same
/// functions and calls the same model rules as the server.
extension Dispatcher {
    static var hlsMethods: [String: Method] {
        [
            "hls-start": .joined(Dispatcher.hlsStart),
            "hls-stop": .joined(Dispatcher.hlsStop),
            "hls-timed-metadata": .joined(Dispatcher.hlsTimedMetadata),
        ]
    }

    func hlsStart(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let variants = try Self.variantRequests(params)
        fanOut(try registry.startLiveStream(by: .peer(peer), in: peer.room, variants: variants))
        logger.info("hls started", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
        return Self.empty
    }

    func hlsStop(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        fanOut(try registry.stopLiveStream(by: .peer(peer), in: peer.room))
        logger.info("hls stopped", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
        return Self.empty
    }

    func hlsTimedMetadata(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let requests = try Self.cueRequests(params)
        let (cues, deliveries) = try registry.addTimedMetadata(by: .peer(peer), in: peer.room, requests)
        fanOut(deliveries)
        return Self.encode { w in w.cues(cues) }
    }

    // MARK: params, shared with REST

    /// `variants?:[{meeting_url?, metadata?}]`; absent → nil (one default variant).
    static func variantRequests(_ params: Params) throws(RoomError) -> [HLSVariantRequest]? {
        guard let items = try params.objects("variants") else { return nil }
        var variants: [HLSVariantRequest] = []
        for item in items {
            variants.append(
                HLSVariantRequest(meetingURL: try item.string("meeting_url"), metadata: try item.string("metadata"))
            )
        }
        return variants
    }

    /// `metadata_objs:[{payload, duration}]` (required).
    static func cueRequests(_ params: Params) throws(RoomError) -> [HLSCueRequest] {
        guard let items = try params.objects("metadata_objs") else {
            throw .invalidParams("metadata_objs: required")
        }
        var cues: [HLSCueRequest] = []
        for item in items {
            let payload = try item.requiredString("payload")
            guard let duration = try item.int("duration", in: RoomRegistry.cueDurationRange) else {
                throw .invalidParams("\(item.path).duration: required (1 to 3600 s)")
            }
            cues.append(HLSCueRequest(payload: payload, durationS: duration))
        }
        return cues
    }
}
