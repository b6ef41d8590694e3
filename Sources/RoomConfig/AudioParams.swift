/// `publishParams.audio`: encoding hints handed to clients; roomd carries no media.
public struct AudioParams: Sendable, Equatable {
    public var bitRate: Int
    public var codec: String

    public init(bitRate: Int = 32, codec: String = "opus") {
        self.bitRate = bitRate
        self.codec = codec
    }
}

extension AudioParams {
    init(_ c: TemplateCursor) throws(TemplateError) {
        let d = AudioParams()
        try self.init(
            bitRate: c.int("bitRate", default: d.bitRate, atLeast: 1),
            codec: c.string("codec", default: d.codec)
        )
    }
}
