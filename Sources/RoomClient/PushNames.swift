import RoomProtocol

extension RoomClient {
    /// Every push roomd sends (docs/openrpc.json's methods marked
    /// `x-roomd-push`, generated into RoomProtocol): `next(_:)` refuses any
    /// other name at once (``RoomClientError/unknownPush(_:suggestions:)``).
    public static var pushNames: Set<String> { PushNames.all }
}
