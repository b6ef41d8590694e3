import Foundation

/// Where the HS256 secret comes from: `--secret-file` wins over
/// `ROOMD_SECRET`; one trailing newline of a file is ignored.
enum Secrets {
    static let minimumBytes = 32

    struct Problem: Error, CustomStringConvertible { var description: String }

    static func load(
        file: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [UInt8]? {
        var secret: [UInt8]
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw Problem(description: "cannot read secret file \(file)")
            }
            secret = Array(data)
            if secret.last == 0x0A { secret.removeLast() }
        } else if let value = environment["ROOMD_SECRET"], !value.isEmpty {
            secret = Array(value.utf8)
        } else {
            return nil
        }
        guard secret.count >= minimumBytes else {
            throw Problem(description: "the secret must be at least \(minimumBytes) bytes, got \(secret.count)")
        }
        return secret
    }

    /// Where a loopback roomd without a configured secret keeps its dev
    /// secrets, one per port, for `roomd token --port P` and `roomd join`:
    /// `$XDG_RUNTIME_DIR/roomd`, else `~/.cache/roomd`, else
    /// `$TMPDIR/roomd-UID` — always the user's own.
    static func devSecretDirectory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        func nonEmpty(_ key: String) -> String? { environment[key].flatMap { $0.isEmpty ? nil : $0 } }
        if let runtime = nonEmpty("XDG_RUNTIME_DIR") { return runtime + "/roomd" }
        if let home = nonEmpty("HOME") { return home + "/.cache/roomd" }
        return (nonEmpty("TMPDIR") ?? "/tmp") + "/roomd-\(getuid())"
    }

    static func devSecretPath(port: Int) -> String {
        devSecretDirectory() + "/dev-\(port).secret"
    }

    /// The dev secret of a fixed port: the one kept from an earlier run, or
    /// a new one, written now (0600, in a 0700 folder) and kept, so tokens
    /// minted before a restart stay valid.
    static func stableDevSecret(port: Int) throws -> (secret: [UInt8], path: String, reused: Bool) {
        let path = devSecretPath(port: port)
        if let kept = try? load(file: path, environment: [:]) { return (kept, path, true) }
        try FileManager.default.createDirectory(
            atPath: devSecretDirectory(),
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let secret = random()
        try writePrivate(secret, to: path)
        return (secret, path, false)
    }

    static func random() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        return (0..<48).map { _ in hex[Int(rng.next() % 16)] }
    }

    /// Writes `secret` to `path` with mode 0600 (creating its folder, 0700).
    static func writePrivate(_ secret: [UInt8], to path: String) throws {
        try? FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        unlink(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else { throw Problem(description: "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = secret.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        guard written == secret.count else { throw Problem(description: "cannot write \(path)") }
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
