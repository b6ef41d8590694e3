#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the template file with the C library, so the error carries the system's reason.
enum TemplateFile {
    static func read(_ path: String) throws(TemplateError) -> [UInt8] {
        guard let file = fopen(path, "rb") else { throw failure(path) }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&chunk, 1, chunk.count, file)
            bytes += chunk[..<n]
            if n < chunk.count {
                guard ferror(file) == 0 else { throw failure(path) }
                return bytes
            }
        }
    }

    private static func failure(_ path: String) -> TemplateError {
        TemplateError(path: "", problem: "cannot read \(path): \(String(cString: strerror(errno)))")
    }
}
