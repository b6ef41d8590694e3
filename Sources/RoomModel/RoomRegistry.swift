import RoomCollections
import RoomConfig

/// Every room of the daemon and the rules that change them.
///
/// Synchronous and single-threaded by design: the server calls it from its
/// one service thread. Every mutating method returns the deliveries it
/// caused; it never talks to the network itself.
///
/// The registry holds the rooms and one object per feature that keeps
/// state across rooms (each in the file named after it, its state private
/// to it); the registry's operations coordinate them — a leave, for one,
/// tells role changes, peer search and reconnect graces to forget the peer.
public final class RoomRegistry {
    public private(set) var template: RoleTemplate
    public var settings: Settings { template.settings }
    let clock: RoomClock
    let ids: IDGenerator
    public internal(set) var rooms: [RoomID: Room] = [:]
    /// Room ids ended with `lock: true` (RoomLocks.swift).
    var locks = RoomLocks()
    /// Polite role-change requests waiting for an answer (RoleChangeRequests.swift).
    var roleChanges = RoleChangeRequests()
    /// Rooms whose active-speaker state needs ticks (ActiveSpeakers.swift).
    var activeSpeakers = ActiveSpeakers()
    /// Large rooms waiting for their next `room-state` (RoomStateBatch.swift).
    var roomStates = RoomStateSchedule()
    /// `find-peer` iterators (PeerSearch.swift).
    var peerSearch = PeerSearch()
    /// Timed polls and polls with stats to send (Polls/PollSchedule.swift).
    var pollSchedule = PollSchedule()
    /// Rooms with Q&A changes to push (QA/QuestionActions.swift).
    var qaSchedule = ChangedRooms()
    /// Rooms with call-in queue changes to push (Stage/StageActions.swift).
    var stageSchedule = ChangedRooms()
    /// Rooms with reaction totals to push (Reactions/ReactionSchedule.swift).
    var reactionSchedule = ReactionSchedule()
    /// The audience feed's recorders, by room id (Feed/FeedRecorders.swift).
    var feeds = FeedRecorders()
    /// Webhook events since the server last took them (OperatorEvents.swift).
    var eventLog = OperatorEventLog()
    /// Every model deadline, whatever its kind (ModelDeadline.swift): the
    /// end of a reconnect grace, of a role-change request, of a timed poll,
    /// of an HLS cue, of a timed chat ban, of an empty room's wait, a token
    /// warning.
    var deadlines = DeadlineQueue<any ModelDeadline>()
    /// `settings.chat.blocked_words` as a matcher (Moderation/WordFilter.swift).
    let wordFilter: WordFilter
    /// `settings.chat.blocked_domains` (section 31), for `Links.isBlocked`.
    let blockedDomains: Set<String>
    /// `settings.chat.hold.words` (section 31), matched as `blocked_words` are.
    let holdFilter: WordFilter

    public init(template: RoleTemplate, clock: RoomClock = SystemClock(), ids: IDGenerator = RandomIDGenerator()) {
        self.template = template
        self.clock = clock
        self.ids = ids
        wordFilter = WordFilter(template.settings.chat.blockedWords)
        blockedDomains = Set(template.settings.chat.blockedDomains)
        holdFilter = WordFilter(template.settings.chat.hold.words)
    }

    /// A reloaded template (SIGHUP): its roles apply to joins and role
    /// changes from now on; peers keep the role they have, even one that
    /// vanished, until it changes. Settings stay those the daemon started
    /// with (timers, limits and buffers are sized from them).
    public func replaceRoles(with reloaded: RoleTemplate) {
        var next = reloaded
        next.settings = template.settings
        template = next
    }

    public var peerCount: Int { rooms.values.reduce(0) { $0 + $1.peerCount } }

    /// Work a periodic tick has left that no call will announce (a stats
    /// slice not sent yet, the rest of a coalesced push cut at its bound):
    /// on test mode's manual clock such a tick stays due instead of being
    /// skipped as clean (Schedule.advance).
    public var hasPendingPollStats: Bool { pollSchedule.hasPendingStats }
    public var hasPendingQuestionPushes: Bool { !qaSchedule.isEmpty }
    public var hasPendingStagePushes: Bool { !stageSchedule.isEmpty }
    public var hasPendingReactionPushes: Bool { !reactionSchedule.roomIDs.isEmpty }
    public var hasPendingRoomStates: Bool { !roomStates.roomIDs.isEmpty }

    public func room(_ id: RoomID) -> Room? { rooms[id] }

    /// Room ids ended with `lock: true`; a lock survives the room itself.
    public var lockedRoomIDs: Set<RoomID> { locks.ids }

    // MARK: helpers of every feature

    func checkSize(_ value: String, field: String, limit: Int) throws(RoomError) {
        let size = value.utf8.count
        if size > limit { throw RoomError(.tooLarge, "\(field): \(size) bytes is over the limit of \(limit)") }
    }

    /// `on-peer-update` about `peer`, the changed one included: to every
    /// peer of the room, except in a large room (section 28, `isQuiet`),
    /// where it goes only to `peer` and the moderating peers. So no viewer
    /// makes roomd push to the whole room by updating itself (a rename, its
    /// data, a hand raise): at most 1 + (moderating peers) pushes, found
    /// through the room's per-role index, not a scan of the room.
    /// `wasPublisher`: the peer's role before a role change could publish
    /// (that change still reaches everyone).
    func peerUpdate(_ peer: Peer, changed: [PeerField], wasPublisher: Bool = false) -> [Delivery] {
        let recipients =
            isQuiet(about: peer, wasPublisher: wasPublisher)
            ? quietRecipients(of: peer) : peer.room.peersInJoinOrder
        return splitBySubscription(recipients, publisher: peer) {
            .peerUpdate(peer, changed: changed, withTracks: $0)
        }
    }

    /// Section 28: in a room above `large_room_threshold`, an update about a
    /// peer whose role may not publish (and could not before) is quiet.
    func isQuiet(about peer: Peer, wasPublisher: Bool = false) -> Bool {
        isLarge(peer.room) && !peer.role.publishParams.canPublish && !wasPublisher
    }

    /// `peer` and every moderating peer of its room, in join order.
    func quietRecipients(of peer: Peer) -> [Peer] {
        var recipients = [peer]
        for name in template.roleNames {
            guard let role = template.roles[name], Self.moderates(role) else { continue }
            recipients += peer.room.peers(withRole: name).lazy.filter { $0 !== peer }
        }
        recipients.sort { $0.sequence < $1.sequence }
        return recipients
    }

    /// One delivery for the recipients that see `publisher`'s tracks, one for
    /// those that don't (a publisher sees its own peer object with its tracks).
    func splitBySubscription(_ recipients: [Peer], publisher: Peer, _ push: (Bool) -> Push) -> [Delivery] {
        var seeing: [Peer] = []
        var blind: [Peer] = []
        for recipient in recipients {
            if recipient === publisher || recipient.sees(tracksOf: publisher) {
                seeing.append(recipient)
            } else {
                blind.append(recipient)
            }
        }
        var deliveries: [Delivery] = []
        if !seeing.isEmpty { deliveries.append(Delivery(push(true), to: seeing)) }
        if !blind.isEmpty { deliveries.append(Delivery(push(false), to: blind)) }
        return deliveries
    }

    /// A peer's permission for a call; the REST API (`.server`) may do anything.
    func requirePermission(
        _ initiator: Initiator,
        _ permission: KeyPath<Permissions, Bool>,
        _ name: String
    )
        throws(RoomError)
    {
        guard case .peer(let peer) = initiator else { return }
        try peer.requireUnrestricted(name)
        if !peer.role.permissions[keyPath: permission] { throw RoomError.denied(name) }
    }
}
