import RoomModel
import RoomWire

/// `rtmp-start`, `rtmp-stop`, `recording-start`, `recording-stop` (1.2,
/// section 23): state only. REST (`…/rtmp/start|stop`, `…/recording/start|stop`)
/// decodes with the same function and calls the same model rules.
extension Dispatcher {
    static var recordingMethods: [String: Method] {
        [
            "rtmp-start": .joined(Dispatcher.rtmpStart),
            "rtmp-stop": .joined(Dispatcher.rtmpStop),
            "recording-start": .joined(Dispatcher.recordingStart),
            "recording-stop": .joined(Dispatcher.recordingStop),
        ]
    }

    func rtmpStart(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        let request = try Self.rtmpRequest(params)
        fanOut(
            try registry.startRTMP(
                by: .peer(peer),
                in: peer.room,
                meetingURL: request.meetingURL,
                urls: request.urls,
                record: request.record
            )
        )
        logger.info(
            "rtmp started",
            metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)", "urls": "\(request.urls.count)"]
        )
        return Self.empty
    }

    func rtmpStop(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        fanOut(try registry.stopRTMP(by: .peer(peer), in: peer.room))
        logger.info("rtmp stopped", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
        return Self.empty
    }

    func recordingStart(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        fanOut(try registry.startRecording(by: .peer(peer), in: peer.room))
        logger.info("recording started", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
        return Self.empty
    }

    func recordingStop(_ params: Params, _ call: inout JoinedCall) throws(RoomError) -> [UInt8] {
        let peer = call.peer
        fanOut(try registry.stopRecording(by: .peer(peer), in: peer.room))
        logger.info("recording stopped", metadata: ["room": "\(peer.room.id)", "peer": "\(peer.id)"])
        return Self.empty
    }

    /// `{meeting_url?, rtmp_urls, record?}`, shared with REST.
    static func rtmpRequest(_ params: Params) throws(RoomError) -> (meetingURL: String?, urls: [String], record: Bool) {
        guard let urls = try params.stringArray("rtmp_urls") else {
            throw .invalidParams("rtmp_urls: required (1 to 3 URLs)")
        }
        return (try params.string("meeting_url"), urls, try params.bool("record") ?? false)
    }
}
