import RoomModel

/// Pushes for a peer in its reconnect grace, held until it resumes
/// (PROTOCOL.md sections 7 and 29). Stands in the peer's `endpoint` while it
/// has no connection.
///
/// Bounded by bytes, not by count: at most `budget` bytes of encoded pushes
/// (`settings.room.resume_buffer_bytes`); past it the grace ends. The
/// coalesced state pushes do not add up: each is merged with the held push
/// of its kind (`HeldMerge`, HeldMerge.swift), and the result takes the
/// newest one's place in the order (the older one's slot becomes a hole).
/// So a grace in a busy room holds its chat and one push per coalesced kind,
/// however many ticks it lasts.
final class HeldPushes: PeerEndpoint {
    /// Bytes of encoded pushes held at most.
    let budget: Int
    /// Bytes of encoded pushes held now (frames as they go on the wire).
    private(set) var byteCount = 0 {
        didSet { metrics?.resumeBufferBytesHeld.add(byteCount - oldValue, ordering: .relaxed) }
    }
    /// Where the node's total of held bytes is kept (`roomd_resume_buffer_bytes`).
    private let metrics: ServerMetrics?
    /// What is held, in order; nil: a hole left by a push merged on.
    private var items: [Item?] = []
    private var holes = 0
    /// Where the held push of each coalesced kind is in `items`.
    private var coalesced: [CoalescedKey: Int] = [:]
    /// The peer was last sent a non-empty `active-speakers` list before its
    /// grace began: an empty one ending the grace means something to it.
    private let speakersShown: Bool

    enum Item {
        case frame(Frame)
        case merged(HeldMerge)

        var byteCount: Int {
            switch self {
            case .frame(let frame): frame.count
            case .merged(let merge): merge.byteCount
            }
        }
    }

    init(budget: Int, speakersShown: Bool = true, metrics: ServerMetrics? = nil) {
        self.budget = budget
        self.speakersShown = speakersShown
        self.metrics = metrics
        super.init(kind: .held)
    }

    /// The grace ended (resumed, left, over budget): its bytes are no longer held.
    deinit { metrics?.resumeBufferBytesHeld.subtract(byteCount, ordering: .relaxed) }

    /// The held pushes as frames, in order (a merged push is one frame, or a
    /// few in a row where its kind bounds a push's entries).
    var frames: [Frame] {
        var frames: [Frame] = []
        frames.reserveCapacity(items.count - holes)
        for item in items {
            switch item {
            case .frame(let frame): frames.append(frame)
            case .merged(let merge): frames += merge.frames
            case nil: break
            }
        }
        return frames
    }

    /// Holds one delivery's push (`push` is shared by every held recipient
    /// of that delivery); false once the held bytes exceed the budget. At
    /// most one merge per call, bounded by the bytes held of its kind.
    func hold(_ push: HeldPush) -> Bool {
        switch push.kind {
        case .plain:
            append(.frame(push.frame))
        case .replacing(let key):
            removeHeld(key)
            // An empty speaker list to a peer whose list was empty when its
            // grace began: the lists held meanwhile (now gone) cancel out.
            if key == .activeSpeakers, push.isEmptySpeakerList, !speakersShown { break }
            append(.frame(push.frame), as: key)
        case .merging(let key):
            let old = removeHeld(key)
            let merged = push.merged(into: old)
            if !merged.frames.isEmpty { append(.merged(merged), as: key) }
        case .droppingReactions:
            append(.frame(push.frame))
            // The held reactions stay where they are, without the gone message's.
            if let index = coalesced[.reactions], case .merged(let old)? = items[index] {
                let kept = push.dropping(from: old)
                byteCount -= old.byteCount
                if kept.frames.isEmpty {
                    items[index] = nil
                    holes += 1
                    coalesced[.reactions] = nil
                } else {
                    items[index] = .merged(kept)
                    byteCount += kept.byteCount
                }
            }
        }
        return byteCount <= budget
    }

    private func append(_ item: Item, as key: CoalescedKey? = nil) {
        if let key { coalesced[key] = items.count }
        items.append(item)
        byteCount += item.byteCount
    }

    /// Takes the held push of `key` out of the order; returns it when it was a merge.
    @discardableResult
    private func removeHeld(_ key: CoalescedKey) -> HeldMerge? {
        guard let index = coalesced.removeValue(forKey: key), let item = items[index] else { return nil }
        items[index] = nil
        holes += 1
        byteCount -= item.byteCount
        compactIfMostlyHoles()
        if case .merged(let merge) = item { return merge }
        return nil
    }

    /// Squeezes the holes out once they are the most of `items` (amortised
    /// O(1) per hold; `coalesced` is rebuilt with the new positions).
    private func compactIfMostlyHoles() {
        guard holes > 64, holes * 2 > items.count else { return }
        var index: [Int: CoalescedKey] = [:]
        for (key, at) in coalesced { index[at] = key }
        var kept: [Item?] = []
        kept.reserveCapacity(items.count - holes)
        coalesced.removeAll(keepingCapacity: true)
        for (at, item) in items.enumerated() where item != nil {
            if let key = index[at] { coalesced[key] = kept.count }
            kept.append(item)
        }
        items = kept
        holes = 0
    }
}
