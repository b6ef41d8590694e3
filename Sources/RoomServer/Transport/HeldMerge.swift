import RoomModel
import RoomProtocol
import RoomWire

/// A coalesced state push as a hold keeps it (PROTOCOL.md section 29): one
/// held push per key.
enum CoalescedKey: Hashable {
    /// `on-reactions`, `on-questions`, `room-state`: merged entry by entry.
    case reactions, questions, roomState
    /// `active-speakers`: the newest list replaces the held one.
    case activeSpeakers
    /// `on-poll-stats` of one poll (a push carries one poll's whole result):
    /// the newest replaces the held one.
    case pollStats(String)
}

/// What a push is to a hold.
enum HeldKind {
    /// Held as it is, after what is held.
    case plain
    /// A whole state: it replaces the held push of its key, at the end.
    case replacing(CoalescedKey)
    /// Merged entry by entry with the held push of its key, at the end.
    case merging(CoalescedKey)
    /// Held as it is, and the held `on-reactions` forgets the counts it
    /// made moot: a deleted message's (`on-message-delete`), or every
    /// message's (nil: `on-chat-clear`; stream and contestant taps stay).
    case droppingReactions(of: String?)

    init(_ push: Push) {
        switch push {
        case .reactions: self = .merging(.reactions)
        case .questions: self = .merging(.questions)
        case .roomState: self = .merging(.roomState)
        case .activeSpeakers: self = .replacing(.activeSpeakers)
        case .pollStats(let poll, _, _): self = .replacing(.pollStats(poll.id))
        case .messageDelete(let messageID, _): self = .droppingReactions(of: messageID)
        case .chatClear: self = .droppingReactions(of: nil)
        default: self = .plain
        }
    }
}

/// One delivery's push as every held recipient of it takes it: its frame,
/// its kind, and the merges it made. Built by the fan-out at the first held
/// recipient of a delivery, so a delivery without one costs nothing.
///
/// Merges are shared: held recipients whose held push of the kind is the
/// same object (a room's peers restored by a takeover, all held from the
/// same moment) get the same merged object, made once. So a tick costs one
/// merge per distinct held state, not one per held peer, and the entries
/// of the push are encoded once per delivery.
final class HeldPush {
    let frame: Frame
    let kind: HeldKind
    private let push: Push?
    /// The push's entries, encoded (once, at the first merge).
    private var incoming: HeldMerge.Entries?
    /// The merge of the push into nothing held (shared by every such recipient).
    private var alone: HeldMerge?
    /// Merges made, by the held object they were made from (kept alive
    /// here, so that an identifier is not reused while the delivery runs).
    private var made: [ObjectIdentifier: (from: HeldMerge, to: HeldMerge)] = [:]

    init(_ push: Push, frame: Frame) {
        self.frame = frame
        kind = HeldKind(push)
        switch kind {
        case .plain, .replacing(.pollStats): self.push = nil
        default: self.push = push
        }
    }

    /// An `active-speakers` with an empty list.
    var isEmptySpeakerList: Bool {
        if case .activeSpeakers(let speakers)? = push { return speakers.isEmpty }
        return false
    }

    /// This push merged into `held`, the held push of its key (nil: none).
    func merged(into held: HeldMerge?) -> HeldMerge {
        guard case .merging(let key) = kind, let push else { preconditionFailure("not a merging push") }
        let entries = incoming ?? HeldMerge.Entries(push)
        incoming = entries
        guard let held else {
            if let alone { return alone }
            let merge = HeldMerge(key, HeldMerge.Entries(), merging: entries)
            alone = merge
            return merge
        }
        if let done = made[ObjectIdentifier(held)] { return done.to }
        let merge = HeldMerge(key, held.entries, merging: entries)
        made[ObjectIdentifier(held)] = (held, merge)
        return merge
    }

    /// `held` (a held `on-reactions`) without the counts this push made moot.
    func dropping(from held: HeldMerge) -> HeldMerge {
        guard case .droppingReactions(let target) = kind else { preconditionFailure("not a deletion") }
        if let done = made[ObjectIdentifier(held)] { return done.to }
        let merge = HeldMerge(.reactions, held.entries.droppingReactions(of: target), merging: HeldMerge.Entries())
        made[ObjectIdentifier(held)] = (held, merge)
        return merge
    }
}

/// A held coalesced push that merges (`on-reactions`, `on-questions`,
/// `room-state`): for each key its newest state, in the order the keys
/// first came, and the frames that say it. Immutable: a merge makes a new one.
///
/// What a merge means is what the pushes mean applied in turn:
/// - `on-reactions {counts}`: per (target, type), the newest total;
/// - `on-questions {changed, removed}`: per question id, the newest state —
///   the newest Question in `changed`, or the id in `removed` (a question
///   hidden and shown again is back in `changed`);
/// - `room-state {peer_count, joined?, left?}`: the newest `peer_count`;
///   per peer id, joined (its newest PeerRef) or left — a peer that joined
///   and left within the hold is in neither, as a room-state tick never
///   names one that came and went between two pushes; the lists are there
///   when any merged push had them.
///
/// Each entry keeps the exact bytes its push encoded, so the merged push
/// carries what the peer would have been told, never a later state.
/// Where the push's own kind bounds its entries (`on-questions` ~16 KiB,
/// `room-state` 100 per list), the merge is cut the same way into several
/// pushes that follow each other at its place.
final class HeldMerge {
    /// Bytes of entries per `on-reactions` / `on-questions` push a merge is cut into.
    static let entryBudget = QuestionBoard.pushBudget

    let key: CoalescedKey
    let entries: Entries
    let frames: [Frame]
    let byteCount: Int

    init(_ key: CoalescedKey, _ held: Entries, merging new: Entries) {
        self.key = key
        var entries = held
        entries.merge(new, cancellingJoinThenLeave: key == .roomState)
        self.entries = entries
        frames = Self.encode(key, entries)
        byteCount = frames.reduce(0) { $0 + $1.count }
    }

    /// One key's state: its encoded entry, or gone (removed, left).
    struct Entry {
        var bytes: [UInt8]
        var gone: Bool
        /// A reaction count's target (to forget a deleted message's).
        var target: String?
    }

    /// Entries by key, in the order the keys first came, and `room-state`'s count.
    struct Entries {
        private(set) var order: [String] = []
        private(set) var byKey: [String: Entry] = [:]
        private(set) var peerCount: Int?
        private(set) var hasLists = false

        init() {}

        /// A push's entries, encoded as its encoder does.
        init(_ push: Push) {
            switch push {
            case .reactions(let counts):
                for count in counts {
                    var w = JSONWriter(reserving: 64)
                    count.encode(into: &w)
                    add(count.target + "\u{0}" + count.type, Entry(bytes: w.bytes, gone: false, target: count.target))
                }
            case .questions(let changed, let removed):
                for question in changed {
                    var w = JSONWriter(reserving: 256)
                    w.question(question)
                    add(question.id, Entry(bytes: w.bytes, gone: false))
                }
                for id in removed { add(id, Entry(bytes: [], gone: true)) }
            case .roomState(let count, let joined, let left):
                peerCount = count
                hasLists = joined != nil || left != nil
                for peer in joined ?? [] {
                    var w = JSONWriter(reserving: 128)
                    w.peerRef(peer)
                    add(peer.id.rawValue, Entry(bytes: w.bytes, gone: false))
                }
                for id in left ?? [] { add(id.rawValue, Entry(bytes: [], gone: true)) }
            default:
                break
            }
        }

        private mutating func add(_ key: String, _ entry: Entry) {
            if byKey.updateValue(entry, forKey: key) == nil { order.append(key) }
        }

        /// `new` applied over these: each key's newest state. With
        /// `cancellingJoinThenLeave` (room-state), a key held as joined
        /// and now gone leaves both lists.
        mutating func merge(_ new: Entries, cancellingJoinThenLeave: Bool) {
            if let count = new.peerCount { peerCount = count }
            hasLists = hasLists || new.hasLists
            var cancelled = false
            for key in new.order {
                let entry = new.byKey[key]!
                if cancellingJoinThenLeave, entry.gone, let held = byKey[key], !held.gone {
                    byKey[key] = nil
                    cancelled = true
                } else {
                    add(key, entry)
                }
            }
            if cancelled { order.removeAll { byKey[$0] == nil } }
        }

        /// Without the reaction counts of message `target`, or of every
        /// message (nil); stream and contestant counts stay.
        func droppingReactions(of target: String?) -> Entries {
            var kept = self
            let moot: (String) -> Bool =
                if let target { { $0 == target } } else { { ReactionTarget($0)?.isTap != true } }
            kept.byKey = byKey.filter { !moot($0.value.target ?? "") }
            if kept.byKey.count != byKey.count { kept.order.removeAll { kept.byKey[$0] == nil } }
            return kept
        }

        var live: [Entry] { order.compactMap { byKey[$0] } }
    }

    // MARK: encoding (PushEncoding.swift's format, entries spliced)

    private static func encode(_ key: CoalescedKey, _ entries: Entries) -> [Frame] {
        let live = entries.live
        switch key {
        case .reactions:
            return pages(live.map(\.bytes), budget: entryBudget).map { page in
                Envelope.notification("on-reactions") { w in
                    w.key("counts")
                    w.array { w in for bytes in page { w.raw(bytes) } }
                }
            }
        case .questions:
            let changed = live.filter { !$0.gone }.map(\.bytes)
            let removed = entries.order.filter { entries.byKey[$0]?.gone == true }
            if changed.isEmpty, removed.isEmpty { return [] }
            let cut = changed.isEmpty ? [ArraySlice<[UInt8]>()] : pages(changed, budget: entryBudget)
            return cut.enumerated().map { index, page in
                Envelope.notification("on-questions") { w in
                    w.key("changed")
                    w.array { w in for bytes in page { w.raw(bytes) } }
                    w.key("removed")
                    w.strings(index == 0 ? removed : [])  // every removal in the first, as the model does
                }
            }
        case .roomState:
            guard let peerCount = entries.peerCount else { return [] }
            let joined = live.filter { !$0.gone }.map(\.bytes)
            let left = entries.order.filter { entries.byKey[$0]?.gone == true }
            guard entries.hasLists else {
                return [Envelope.notification("room-state") { w in w.field("peer_count", peerCount) }]
            }
            let size = RoomRegistry.roomStatePage
            let count = max(1, (joined.count + size - 1) / size, (left.count + size - 1) / size)
            return (0..<count).map { page in
                Envelope.notification("room-state") { w in
                    w.field("peer_count", peerCount)
                    w.key("joined")
                    w.array { w in for bytes in joined.dropFirst(page * size).prefix(size) { w.raw(bytes) } }
                    w.key("left")
                    w.strings(left.dropFirst(page * size).prefix(size))
                }
            }
        case .activeSpeakers, .pollStats:
            preconditionFailure("replaced, never merged")
        }
    }

    /// `entries` cut into runs of at most `budget` bytes (at least one entry each).
    private static func pages(_ entries: [[UInt8]], budget: Int) -> [ArraySlice<[UInt8]>] {
        var pages: [ArraySlice<[UInt8]>] = []
        var start = 0
        var bytes = 0
        for (index, entry) in entries.enumerated() {
            if index > start, bytes + entry.count > budget {
                pages.append(entries[start..<index])
                start = index
                bytes = 0
            }
            bytes += entry.count
        }
        if start < entries.count { pages.append(entries[start...]) }
        return pages
    }
}
