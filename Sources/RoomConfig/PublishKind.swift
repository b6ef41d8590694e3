/// What a role may publish, as named in `publishParams.allowed`.
public enum PublishKind: String, Sendable, CaseIterable {
    case audio, video, screen
}
