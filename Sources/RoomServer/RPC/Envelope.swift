import RoomModel
import RoomWire

/// The JSON-RPC envelopes, encoded once into complete frames.
/// (`package`: `roombench micro` measures `push`.)
package enum Envelope {
    static func notification(_ method: String, _ params: (inout JSONWriter) -> Void) -> Frame {
        var w = Frame.writer()
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.field("method", method)
            w.key("params")
            w.object(params)
        }
        return Frame(payload: w)
    }

    /// The method of a notification made by `notification(_:_:)` (its
    /// payload begins `{"jsonrpc":"2.0","method":"NAME"`; push names have
    /// no escapes). Test mode's push faults read it, on their cold path.
    static func method(of frame: Frame) -> String? {
        let payload = frame.textPayload
        let prefix = Array(#"{"jsonrpc":"2.0","method":""#.utf8)
        guard payload.count > prefix.count, payload.starts(with: prefix) else { return nil }
        let name = payload.dropFirst(prefix.count)
        guard let end = name.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return String(decoding: name[..<end], as: UTF8.self)
    }

    /// A notification whose params object is already encoded.
    static func notification(_ method: String, params: [UInt8]) -> Frame {
        var w = Frame.writer(reserving: params.count + 64)
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.field("method", method)
            w.key("params")
            w.raw(params)
        }
        return Frame(payload: w)
    }

    /// One response object (not framed: batches put several in an array).
    static func response(id: JSON, into w: inout JSONWriter, result: [UInt8]) {
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.key("id")
            w.value(id)
            w.key("result")
            w.raw(result)
        }
    }

    static func response(id: JSON, into w: inout JSONWriter, error: RoomError) {
        w.object { w in
            w.field("jsonrpc", "2.0")
            w.key("id")
            w.value(id)
            w.key("error")
            w.object { w in
                w.field("code", error.code.rawValue)
                w.field("message", error.message)
                error.encodeData(into: &w)
            }
        }
    }
}

extension Envelope {
    /// `error` as the answer to every call of `message` (one call or a
    /// batch): the responses (an array for a batch) in one frame, and an
    /// `on-error` push per notification, as the dispatcher answers a call
    /// that fails. Nothing for a message that is not JSON-RPC (no id to answer).
    static func failures(of message: [UInt8], _ error: RoomError) -> [Frame] {
        guard let json = try? JSON.parse(message) else { return [] }
        let batch = json.arrayValue
        var responses: [JSON] = []
        var frames: [Frame] = []
        for call in batch ?? [json] {
            guard call.objectValue != nil, let method = call["method"]?.stringValue else { continue }
            switch call["id"] {
            case .string?, .number?:
                responses.append(call["id"]!)
            case nil:
                frames.append(
                    notification("on-error") { w in
                        w.field("code", error.code.rawValue)
                        w.field("message", error.message)
                        w.field("method", method)
                    }
                )
            default:
                continue
            }
        }
        if responses.isEmpty { return frames }
        var out = Frame.writer(reserving: 128)
        if batch != nil { out.beginArray() }
        for id in responses { response(id: id, into: &out, error: error) }
        if batch != nil { out.endArray() }
        return [Frame(payload: out)] + frames
    }
}

extension RoomError {
    /// The error object's `data`, when it has one: 42901's
    /// `{"retry_after_ms":…}` (section 22), 40407's `{"status":…}` (section 26).
    func encodeData(into w: inout JSONWriter) {
        guard retryAfterMs != nil || status != nil else { return }
        w.key("data")
        w.object { w in
            if let retry = retryAfterMs { w.field("retry_after_ms", retry) }
            if let status { w.field("status", status) }
        }
    }
}
