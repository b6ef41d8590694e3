import RoomProtocol
import RoomWire

/// An audience question (PROTOCOL.md section 21): `{question_id, text,
/// asked_by, asked_at, up, down, score, state, pinned}`, and who voted how.
public struct Question: Sendable, Equatable {
    public typealias State = QuestionState
    public typealias Vote = QuestionVote

    public var id: String
    public var text: String
    public var askedBy: ActorRef
    public var askedAt: Int64
    public private(set) var up = 0
    public private(set) var down = 0
    public var state: State = .open
    public var pinned = false
    /// Asked by a shadow chat-banned user (1.3, section 31): seen only by
    /// its user's peers and `moderateChat` peers (who see `shadowed: true`).
    public var shadowed = false
    /// One vote per user (`user_id`): true up, false down.
    public private(set) var votes: [UserID: Bool] = [:]

    public var score: Int { up - down }

    /// The question without who voted how (what the audience feed keeps: a
    /// copy that holds the votes would copy them on the next vote).
    var withoutVotes: Question {
        var copy = self
        copy.votes = [:]
        return copy
    }

    /// The wire's Question `{question_id, text, asked_by, asked_at, up, down,
    /// score, state, pinned, shadowed?}` (never who voted how; `shadowed`
    /// only when true, which only moderators' copies are): what `question-add`,
    /// `question-list` and `on-questions` carry, and what their bounds count.
    public func encode(into w: inout JSONWriter) {
        w.object { w in
            w.field("question_id", id)
            w.field("text", text)
            w.key("asked_by")
            PeerRef.encode(askedBy, into: &w)
            w.field("asked_at", askedAt)
            w.field("up", up)
            w.field("down", down)
            w.field("score", score)
            w.field("state", state.rawValue)
            w.field("pinned", pinned)
            if shadowed { w.field("shadowed", true) }
        }
    }

    /// The question as its asker's user reads it: a shadowed one unmarked.
    var unmarked: Question {
        var copy = self
        copy.shadowed = false
        return copy
    }

    /// The bytes of its JSON, escapes included (`encode(into:)`).
    public var encodedSize: Int {
        var w = JSONWriter(reserving: text.utf8.count + 256)
        encode(into: &w)
        return w.bytes.count
    }

    public init(id: String, text: String, askedBy: ActorRef, askedAt: Int64) {
        self.id = id
        self.text = text
        self.askedBy = askedBy
        self.askedAt = askedAt
    }

    /// `user`'s vote replaces its last one; returns the change in the number of votes kept (-1, 0, 1).
    mutating func vote(_ vote: Vote, by user: UserID) -> Int {
        let before = votes[user]
        switch before {
        case true?: up -= 1
        case false?: down -= 1
        case nil: break
        }
        switch vote {
        case .up:
            votes[user] = true
            up += 1
        case .down:
            votes[user] = false
            down += 1
        case .none:
            votes[user] = nil
        }
        return (votes[user] == nil ? 0 : 1) - (before == nil ? 0 : 1)
    }

    /// A question as a snapshot saved it: its counts, and the votes that
    /// fitted in the snapshot (a user whose vote was left out may vote again).
    init(
        id: String,
        text: String,
        askedBy: ActorRef,
        askedAt: Int64,
        state: State,
        pinned: Bool,
        up: Int,
        down: Int,
        votes: [UserID: Bool]
    ) {
        self.init(id: id, text: text, askedBy: askedBy, askedAt: askedAt)
        self.state = state
        self.pinned = pinned
        self.up = up
        self.down = down
        self.votes = votes
    }
}
