import RoomModel

/// What one client message's calls leave for after its response (a batch
/// shares one): the dispatcher folds each call's into the message's, last
/// writer wins, and acts on it once the response is queued.
struct AfterReply {
    /// A resume's held pushes, queued right after the response (bounded by
    /// `resume_buffer_bytes`, so not counted against `max_outbound_bytes`).
    var replay: [Frame]?
    /// Close the caller's connection with this code once it is answered
    /// (`leave`: 1000; a change that disconnects the caller: 4001/4002).
    var closeCode: UInt16?

    /// A call's leftovers into the message's: what a later call set wins.
    mutating func fold(_ call: AfterReply) {
        if let replay = call.replay { self.replay = replay }
        if let code = call.closeCode { closeCode = code }
    }
}

/// A call of a method that needs no peer (`join`, `ping`, `preview`): the
/// connection it came on, and what it leaves for after its response.
struct Call {
    let connection: Connection
    var after = AfterReply()
    /// Section 30: where the call stands with its hook (Hooks/HookGate.swift).
    var hook = HookStep.fresh
}

/// A call of a joined peer: the dispatcher checked once that the connection
/// has a peer and hands it over, with the connection it came on and what
/// the call leaves for after its response.
struct JoinedCall {
    let peer: Peer
    let connection: Connection
    var after = AfterReply()
    /// Section 30: where the call stands with its hook (Hooks/HookGate.swift).
    var hook = HookStep.fresh

    var room: Room { peer.room }
}
