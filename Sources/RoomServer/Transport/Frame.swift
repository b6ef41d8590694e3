import RoomWire

/// One complete server-to-client WebSocket text frame: header and payload in
/// a single immutable buffer. A push to N peers is encoded into one `Frame`
/// and the same object is queued N times; connections copy it into their
/// write, they never write into it (so no frame header is ever written into
/// shared bytes, and several queued frames can leave in one `write`).
///
/// `@unchecked Sendable`: `queuedOn` is read and written only by the service
/// thread whose queues hold the frame (a frame never crosses threads while
/// queued: the bus and a sibling thread get its bytes); debug builds check
/// that on every queue and removal (`queuedBy`, FrameQueue.swift). A frame
/// may be made on another thread before it is first queued (the policy
/// frames, on the thread that made the server). The static `ping`, shared
/// by every service thread, is immortal and never counted.
package final class Frame: @unchecked Sendable {
    /// Room reserved in front of the payload for the largest header (2 + 8 bytes).
    package static let headerRoom = 10

    private let storage: [UInt8]
    private let start: Int
    /// Connection queues holding this frame (`FrameQueue`): they share one
    /// strong reference, taken by the first and given back by the last, so a
    /// push to N peers costs one atomic retain and release instead of N.
    var queuedOn = 0
    #if DEBUG
    /// The thread whose queues hold the frame while `queuedOn` > 0 (debug builds).
    var queuedBy: UInt = 0
    #endif
    /// Lives as long as the process (static): queues neither count nor retain it.
    let isImmortal: Bool

    /// permessage-deflate's form of this frame (`deflated(by:)`), made once.
    private var deflatedForm: DeflatedForm = .untried

    private enum DeflatedForm {
        case untried
        case smaller(Frame)
        case plain
    }

    /// Builds a frame around a payload that was written after `headerRoom`
    /// reserved bytes (see `Frame.writer()`). `firstByte`: FIN + text, or
    /// FIN + RSV1 + text (0xC1) for a compressed payload.
    package init(reservedPayload buffer: [UInt8], firstByte: UInt8 = 0x81) {
        var storage = buffer
        let length = storage.count - Self.headerRoom
        var header: [UInt8] = [firstByte]
        if length < 126 {
            header.append(UInt8(length))
        } else if length <= 0xFFFF {
            header.append(126)
            header.append(UInt8(length >> 8))
            header.append(UInt8(length & 0xFF))
        } else {
            header.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { header.append(UInt8((length >> shift) & 0xFF)) }
        }
        let start = Self.headerRoom - header.count
        storage.replaceSubrange(start..<Self.headerRoom, with: header)
        self.storage = storage
        self.start = start
        isImmortal = false
    }

    /// A writer whose buffer has the header room reserved.
    static func writer(reserving capacity: Int = 256) -> JSONWriter {
        JSONWriter(reserving: capacity, prefix: headerRoom)
    }

    convenience init(payload writer: JSONWriter) {
        self.init(reservedPayload: writer.bytes)
    }

    /// A frame already complete on the wire (control frames, and frames a
    /// room's home node sent over the cluster bus).
    init(wire bytes: [UInt8], immortal: Bool = false) {
        storage = bytes
        start = 0
        isImmortal = immortal
    }

    /// A WebSocket ping with no payload: server frames are unmasked, so it is
    /// two bytes, shared by every connection (of every service thread).
    static let ping = Frame(wire: [0x89, 0x01, 0x6B], immortal: true)

    /// Size on the wire.
    package var count: Int { storage.count - start }

    /// The payload (the JSON text of a text frame), past the header.
    package var textPayload: ArraySlice<UInt8> {
        guard count >= 2 else { return [] }
        let short = Int(storage[start + 1] & 0x7F)
        return storage[(start + (short == 127 ? 10 : short == 126 ? 4 : 2))...]
    }

    /// The frame to queue to a connection that negotiated permessage-deflate:
    /// its compressed form, made by the first such recipient and kept for the
    /// others (one deflate per push), or the frame itself when it is a
    /// control frame, short, or would not shrink. Read and written by the
    /// service thread that queues the frame (as `queuedOn`).
    func deflated(by deflater: MessageDeflater) -> Frame {
        guard !isImmortal else { return self }  // the ping, shared by every service thread: never written
        switch deflatedForm {
        case .smaller(let frame): return frame
        case .plain: return self
        case .untried:
            guard storage[start] == 0x81, count >= MessageDeflater.minimumFrameBytes,
                let frame = deflater.frame(of: textPayload, plainCount: count)
            else {
                deflatedForm = .plain
                return self
            }
            deflatedForm = .smaller(frame)
            return frame
        }
    }

    /// Appends the frame's wire bytes (to a cluster message).
    func append(to bytes: inout [UInt8]) {
        storage.withUnsafeBufferPointer { bytes.append(contentsOf: $0[start...]) }
    }

    /// Copies `count` wire bytes starting `offset` bytes into the frame.
    func copy(from offset: Int, count: Int, into destination: UnsafeMutableRawPointer) {
        storage.withUnsafeBytes { source in
            destination.copyMemory(from: source.baseAddress! + start + offset, byteCount: count)
        }
    }
}
