/// One push and who gets it: what every rule of the model returns.
public struct Delivery {
    /// Who gets the push: `audience` without `excluded`. A broadcast passes
    /// the room's own join-order array (no copy: it is copy-on-write) and its
    /// sender, so no array of recipients is built per push; the transport
    /// skips `excluded` (always one of `audience`) by identity while it fans out.
    public var audience: [Peer]
    public var excluded: Peer?
    public var push: Push

    public init(_ push: Push, to recipients: [Peer]) {
        self.audience = recipients
        self.excluded = nil
        self.push = push
    }

    public init(_ push: Push, to audience: [Peer], excluding excluded: Peer) {
        self.audience = audience
        self.excluded = excluded
        self.push = push
    }

    /// The recipients as an array (built when `excluded` is set: for tests and cold paths).
    public var recipients: [Peer] {
        guard let excluded else { return audience }
        return audience.filter { $0 !== excluded }
    }

    public var recipientCount: Int { excluded == nil ? audience.count : audience.count - 1 }
}

extension Array where Element == Delivery {
    /// Drops deliveries that reach nobody.
    var nonEmpty: [Delivery] { filter { $0.recipientCount > 0 } }
}

/// A peer whose connection must close after its pushes (`peer-leave-request`, `end-room`).
public struct Disconnect {
    public enum Reason: Sendable { case removed, roomEnded }
    public var peer: Peer
    public var reason: Reason
}

/// The deliveries a change caused, and the peers it disconnects.
public struct Effects {
    public var deliveries: [Delivery] = []
    public var disconnects: [Disconnect] = []

    public init(deliveries: [Delivery] = [], disconnects: [Disconnect] = []) {
        self.deliveries = deliveries
        self.disconnects = disconnects
    }

    mutating func send(_ push: Push, to recipients: [Peer]) {
        if !recipients.isEmpty { deliveries.append(Delivery(push, to: recipients)) }
    }
}
