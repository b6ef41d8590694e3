/// `publishParams.video` and `publishParams.screen`: encoding hints handed to clients.
public struct VideoParams: Sendable, Equatable {
    public var bitRate: Int
    public var codec: String
    public var frameRate: Int
    public var width: Int
    public var height: Int

    /// Defaults to `defaultVideo`.
    public init(bitRate: Int = 300, codec: String = "vp8", frameRate: Int = 30, width: Int = 480, height: Int = 360) {
        self.bitRate = bitRate
        self.codec = codec
        self.frameRate = frameRate
        self.width = width
        self.height = height
    }

    /// Camera video when the template does not say.
    public static let defaultVideo = VideoParams()
    /// Screen share when the template does not say.
    public static let defaultScreen = VideoParams(bitRate: 1000, codec: "vp8", frameRate: 10, width: 1920, height: 1080)
}

extension VideoParams {
    /// Reads the object; absent fields keep the value in `d`.
    init(_ c: TemplateCursor, defaults d: VideoParams) throws(TemplateError) {
        try self.init(
            bitRate: c.int("bitRate", default: d.bitRate, atLeast: 1),
            codec: c.string("codec", default: d.codec),
            frameRate: c.int("frameRate", default: d.frameRate, atLeast: 1),
            width: c.int("width", default: d.width, atLeast: 1),
            height: c.int("height", default: d.height, atLeast: 1)
        )
    }
}
