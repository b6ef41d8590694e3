extension RoomServer {
    /// Reassembles one WebSocket message from lws' fragments and hands it to
    /// the dispatcher. Binary → 1003; over `max_message_bytes` → 1009
    /// (the limit is ours: lws never caps a message).
    func received(_ bytes: UnsafeRawBufferPointer, on connection: Connection, first: Bool, final: Bool, binary: Bool) {
        if connection.isClosing { return }
        if first {
            connection.inbound.removeAll(keepingCapacity: connection.inbound.capacity <= 64 * 1024)
            connection.inboundIsBinary = binary
        }
        if connection.inboundIsBinary {
            logger.info("binary message rejected", metadata: metadata(connection))
            connection.close(1003)
            return
        }
        let limit = options.template.settings.limits.maxMessageBytes
        if connection.inbound.count + bytes.count > limit {
            logger.info("message over max_message_bytes", metadata: metadata(connection))
            connection.inbound = []
            connection.close(1009)
            return
        }
        connection.inbound.append(contentsOf: bytes)
        guard final else { return }
        let message = connection.inbound
        connection.inbound.removeAll(keepingCapacity: connection.inbound.capacity <= 64 * 1024)
        if let router { router.inbound(message, on: connection) } else { dispatcher.handle(message, from: connection) }
    }

    func metadata(_ connection: Connection) -> Logger.Metadata {
        var metadata: Logger.Metadata = ["conn": "\(connection.id)"]
        if let peer = connection.peer {
            metadata["room"] = "\(peer.room.id)"
            metadata["peer"] = "\(peer.id)"
        }
        return metadata
    }
}

import Logging
