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
            }
        }
    }
}
