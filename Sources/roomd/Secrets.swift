import Foundation

/// Where the HS256 secret comes from: `--secret-file` wins over
/// `ROOMD_SECRET`; one trailing newline of a file is ignored.
enum Secrets {
    static let minimumBytes = 32

    struct Problem: Error, CustomStringConvertible { var description: String }

    static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> [UInt8]? {
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

    /// Path of the throwaway secret a loopback roomd without a configured
    /// secret writes for its run, so `roomd token --port P` finds it.
    static func devSecretPath(port: Int) -> String {
        let dir = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        return (dir as NSString).appendingPathComponent("roomd-dev-\(port).secret")
    }

    static func random() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        return (0..<48).map { _ in hex[Int(rng.next() % 16)] }
    }

    /// Writes `secret` to `path` with mode 0600.
    static func writePrivate(_ secret: [UInt8], to path: String) throws {
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
