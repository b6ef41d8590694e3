// The call-in queue (PROTOCOL.md section 26). Same conventions as Peers.swift.

/// Where a stage request is: `waiting` in the queue, `invited` (a polite
/// role change is open), `live` (accepted); or ended: `declined`,
/// `withdrawn`, `done`.
public enum StageStatus: String, Sendable, Equatable, Hashable, CaseIterable {
    case waiting, invited, live, declined, withdrawn, done

    /// `declined`, `withdrawn` or `done`: the request is over.
    public var hasEnded: Bool {
        switch self {
        case .waiting, .invited, .live: false
        case .declined, .withdrawn, .done: true
        }
    }

    /// `waiting` or `invited`: the user's one open request.
    public var isOpen: Bool { self == .waiting || self == .invited }
}
