import Logging

/// The message being reassembled from lws' fragments.
struct InboundMessage {
    var bytes: [UInt8] = []
    var isBinary = false

    /// Empties the buffer, keeping a capacity of up to 64 KiB for the next message.
    mutating func reset() { bytes.removeAll(keepingCapacity: bytes.capacity <= 64 * 1024) }
}

/// What one fragment of a client's message made of it.
enum InboundProgress {
    /// More fragments follow.
    case partial
    /// A complete text message.
    case complete([UInt8])
    /// The message is refused and the connection closes with `code`.
    case refused(code: UInt16, reason: String)
}

extension Connection {
    /// Reassembles one WebSocket message from lws' fragments. Binary → 1003;
    /// over `limit` (`max_message_bytes`) → 1009 as soon as the limit is
    /// passed (the limit is ours: lws never caps a message).
    func receive(
        _ fragment: UnsafeRawBufferPointer,
        first: Bool,
        final: Bool,
        binary: Bool,
        limit: Int
    ) -> InboundProgress {
        if isClosing { return .partial }
        if let turnWrites { lastReadTurn = turnWrites.turn }  // its answers are written first (Sockets.writeAfterTurn)
        if first {
            inbound.reset()
            inbound.isBinary = binary
        }
        if inbound.isBinary {
            close(1003)
            return .refused(code: 1003, reason: "binary message rejected")
        }
        if inbound.bytes.count + fragment.count > limit {
            inbound = InboundMessage()
            close(1009)
            return .refused(code: 1009, reason: "message over max_message_bytes")
        }
        inbound.bytes.append(contentsOf: fragment)
        guard final else { return .partial }
        let message = inbound.bytes
        inbound.reset()
        return .complete(message)
    }

    /// The connection's ids for a log line: `conn`, and `room` and `peer` once joined.
    var logMetadata: Logger.Metadata {
        var metadata: Logger.Metadata = ["conn": "\(id)"]
        if let peer {
            metadata["room"] = "\(peer.room.id)"
            metadata["peer"] = "\(peer.id)"
        }
        return metadata
    }
}
