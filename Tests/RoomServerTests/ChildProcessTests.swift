import Foundation
import RoomdTesting
import Synchronization
import Testing

/// How RoomdTesting starts daemons, nats-server and tools (ChildProcess.swift).
@Suite struct ChildProcessTests {
    /// The child gets exactly 0, 1 and 2: a descriptor this process opened
    /// without close-on-exec does not leak into it (with Foundation's
    /// Process one opened by another thread meanwhile did, and kept a
    /// daemon's stdin open after its harness closed it).
    @Test func aChildGetsOnlyItsThreeDescriptors() throws {
        let leaky = open("/dev/null", O_RDONLY)  // no O_CLOEXEC
        #expect(leaky > 2)
        defer { close(leaky) }
        let run = try runTool("/bin/sh", ["-c", "ls /proc/$$/fd"])
        #expect(run.status == 0)
        let descriptors = String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").sorted()
        #expect(descriptors == ["0", "1", "2"], "stderr: \(String(decoding: run.stderr, as: UTF8.self))")
    }

    /// Many threads start children at once while this process holds a few
    /// thousand descriptors: what made Foundation's `Process.run` of Swift
    /// 6.3.1 fault (its /proc/self/fd walk reads past glibc's dirent buffer,
    /// swift-corelibs-foundation #5472). Every child starts and reports its
    /// exit status and output.
    @Test func childrenStartFromManyThreadsWhileManyDescriptorsAreOpen() throws {
        var held: [Int32] = []
        defer { for fd in held { close(fd) } }
        for _ in 0..<3000 {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { break }  // the open-file limit: as many as fit
            held.append(fd)
        }
        #expect(held.count >= 1000)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for round in 0..<25 {
                do {
                    let run = try runTool("/bin/sh", ["-c", "echo \(thread)-\(round); exit \(round % 3)"])
                    if run.status != Int32(round % 3) || run.stdout != Data("\(thread)-\(round)\n".utf8) {
                        failures.withLock { $0.append("\(thread)-\(round): \(run)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(thread)-\(round): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 } == [])
    }

    /// The status of a child a signal ended is the signal's number, as with
    /// Foundation's `terminationStatus`; a signal after the exit is not sent.
    @Test func aSignalledChildReportsTheSignalAndIsReapedOnce() throws {
        let child = try ChildProcess.spawn("/bin/sleep", ["30"])
        #expect(child.isRunning)
        child.terminate()
        #expect(child.waitUntilExit() == SIGTERM)
        #expect(!child.isRunning)
        child.signal(SIGKILL)  // reaped: its pid is nobody's to signal
        #expect(child.exitStatus == SIGTERM)
        #expect(throws: RoomdProcessError.self) { try ChildProcess.spawn("/nonexistent/tool", []) }
    }
}
