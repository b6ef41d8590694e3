import RoomModel

/// Pushes for a peer in its reconnect grace, held until it resumes. Stands
/// in the peer's `endpoint` while it has no connection.
final class HeldPushes: PeerEndpoint {
    /// More than this and the grace ends at once (PROTOCOL.md section 7).
    static let limit = 256

    private(set) var frames: [Frame] = []

    init() { super.init(kind: .held) }

    /// Holds a frame; false when the limit is exceeded.
    func hold(_ frame: Frame) -> Bool {
        guard frames.count < Self.limit else { return false }
        frames.append(frame)
        return true
    }
}
