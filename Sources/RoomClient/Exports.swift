/// `JSON` (params, results, pushes) comes with `import RoomClient`.
@_exported import enum RoomWire.JSON
