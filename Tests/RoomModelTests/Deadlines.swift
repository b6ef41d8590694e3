import RoomModel

extension RoomRegistry {
    /// Runs the model deadlines due now: their deliveries, in order (what
    /// the server fans out).
    func expireDueDeliveries() -> [Delivery] { expireDue().flatMap(\.effects.deliveries) }

    /// The same as one `Effects`.
    func expireDueEffects() -> Effects { Effects(deliveries: expireDueDeliveries()) }
}
