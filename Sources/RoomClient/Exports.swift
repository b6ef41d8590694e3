// `import RoomClient` brings `JSON` (params, results, pushes) and the wire's
// objects (PROTOCOL.md), defined once in RoomProtocol for the server and the
// kits.
@_exported import RoomProtocol
@_exported import enum RoomWire.JSON

/// A peer in the room, as the wire gives it (`WirePeer`; the server's model has a `Peer` class).
public typealias Peer = WirePeer
/// The room as `join` reports it (`WireRoom`).
public typealias Room = WireRoom
