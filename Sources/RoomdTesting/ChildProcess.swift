import CSpawn
import Foundation
import Synchronization

/// A process RoomdTesting started (a daemon, nats-server, a tool), started
/// with posix_spawn (CSpawn) instead of Foundation's `Process`:
/// `Process.run` of Swift 6.3.1 faults now and then while the test process
/// holds many descriptors (swift-corelibs-foundation #5472), and leaks
/// descriptors another thread opens meanwhile into the child. A child of
/// this type gets exactly descriptors 0, 1 and 2.
///
/// The child is reaped here (`waitpid` on demand), so its exit is known the
/// moment it happens, whatever else the test process does.
package final class ChildProcess: Sendable {
    /// Where one of the child's descriptors 0, 1 and 2 comes from.
    package enum Stream: Sendable {
        /// /dev/null.
        case null
        /// This process's own descriptor of the same number.
        case inherit
        /// A descriptor of this process (a pipe's end, a file); the caller
        /// keeps and closes it.
        case descriptor(Int32)
    }

    package let processIdentifier: Int32
    private let status = Mutex<Int32?>(nil)

    private init(pid: Int32) { processIdentifier = pid }

    /// Starts `executable` with `arguments` (not including argv[0]).
    /// `environment` nil: this process's.
    package static func spawn(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        stdin: Stream = .null,
        stdout: Stream = .null,
        stderr: Stream = .inherit,
        directory: String? = nil
    ) throws -> ChildProcess {
        func descriptor(_ stream: Stream, _ own: Int32) -> Int32 {
            switch stream {
            case .null: -1
            case .inherit: own
            case .descriptor(let fd): fd
            }
        }
        let environment = environment ?? ProcessInfo.processInfo.environment
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = cspawn(
            &pid,
            executable,
            argv,
            envp,
            descriptor(stdin, 0),
            descriptor(stdout, 1),
            descriptor(stderr, 2),
            directory
        )
        guard result == 0 else {
            throw RoomdProcessError(description: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return ChildProcess(pid: pid)
    }

    /// The exit status once the child has ended (the signal's number when a
    /// signal ended it), nil while it runs.
    package var exitStatus: Int32? {
        status.withLock { status in
            if let status { return status }
            var raw: Int32 = 0
            let reaped = waitpid(processIdentifier, &raw, WNOHANG)
            guard reaped == processIdentifier else { return nil }
            let code = (raw & 0x7f) == 0 ? (raw >> 8) & 0xff : raw & 0x7f
            status = code
            return code
        }
    }

    package var isRunning: Bool { exitStatus == nil }

    /// The exit status; blocks until the child has ended.
    @discardableResult
    package func waitUntilExit() -> Int32 {
        while true {
            if let status = exitStatus { return status }
            usleep(5_000)
        }
    }

    /// Sends `signal` unless the child has ended (and been reaped: its pid
    /// may be another process's by now).
    package func signal(_ signal: Int32) {
        status.withLock { status in
            if status == nil { _ = kill(processIdentifier, signal) }
        }
    }

    /// SIGTERM.
    package func terminate() { signal(SIGTERM) }
}

/// A pipe whose two ends close on exec (a child gets an end as its 0, 1 or
/// 2 only); each end is closed when its handle goes.
package struct ChildPipe: Sendable {
    package let read: FileHandle
    package let write: FileHandle

    package init() throws {
        var fds: [Int32] = [0, 0]
        guard cspawn_pipe(&fds) == 0 else {
            throw RoomdProcessError(description: "pipe2: \(String(cString: strerror(errno)))")
        }
        read = FileHandle(fileDescriptor: fds[0], closeOnDealloc: true)
        write = FileHandle(fileDescriptor: fds[1], closeOnDealloc: true)
    }
}

/// Runs a tool to its end (or `timeout` s, then SIGKILL): its exit status,
/// standard output and standard error. Input, when given, is written to its
/// standard input, which then closes.
package func runTool(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    input: Data? = nil,
    directory: String? = nil,
    timeout: Double = 60
) throws -> (status: Int32, stdout: Data, stderr: Data) {
    let out = try ChildPipe()
    let err = try ChildPipe()
    let inPipe = try input.map { _ in try ChildPipe() }
    let child = try ChildProcess.spawn(
        executable,
        arguments,
        environment: environment,
        stdin: inPipe.map { .descriptor($0.read.fileDescriptor) } ?? .null,
        stdout: .descriptor(out.write.fileDescriptor),
        stderr: .descriptor(err.write.fileDescriptor),
        directory: directory
    )
    try out.write.close()
    try err.write.close()
    if let inPipe, let input {
        try inPipe.read.close()
        // A tool that exits without reading gets no SIGPIPE-killed caller:
        // the write fails with EPIPE, which is ignored.
        try? inPipe.write.write(contentsOf: input)
        try? inPipe.write.close()
    }
    let deadline = Date().addingTimeInterval(timeout)
    var stdout = Data()
    var stderr = Data()
    var open = [out.read.fileDescriptor, err.read.fileDescriptor]
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while !open.isEmpty {
        let left = deadline.timeIntervalSinceNow
        if left <= 0 {
            child.signal(SIGKILL)
            break
        }
        var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        let ready = poll(&fds, nfds_t(fds.count), Int32(min(left, 1) * 1000))
        if ready < 0 && errno != EINTR { break }
        for entry in fds where entry.revents != 0 {
            let count = read(entry.fd, &buffer, buffer.count)
            if count > 0 {
                if entry.fd == out.read.fileDescriptor {
                    stdout.append(contentsOf: buffer[0..<count])
                } else {
                    stderr.append(contentsOf: buffer[0..<count])
                }
            } else if count == 0 || errno != EINTR {
                open.removeAll { $0 == entry.fd }
            }
        }
    }
    return (child.waitUntilExit(), stdout, stderr)
}
