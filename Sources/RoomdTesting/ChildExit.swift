import Foundation

// Whether a child process has ended, asked of the kernel.
//
// Foundation's `Process` (swift-corelibs-foundation) learns that a child
// ended when a socket the child inherited closes. `Process.run` closes the
// parent's other descriptors in the child by listing those open at that
// moment, so descriptors another thread opens meanwhile (the pipes, log
// file and socket of a process started at the same time) leak into the
// child. A child whose socket leaked into a longer-lived one stays
// `isRunning` after it ended (a zombie) until that one ends too, and
// `waitUntilExit()` blocks as long: with the test suite's every thread
// waiting so, nothing ended the other one, and `swift test` hung.
//
// `waitid(…, WNOWAIT)` tells without reaping the child: Foundation still
// reaps it (and sets `terminationStatus`) when its socket closes.

/// The exit status of `process` once it has ended (the signal's number
/// when a signal ended it), nil while it runs.
package func exitStatus(of process: Process) -> Int32? {
    if !process.isRunning { return process.terminationStatus }
    var info = siginfo_t()
    guard waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT) == 0 else {
        return nil  // EINTR; or ECHILD: Foundation reaped it a moment ago, `isRunning` turns false next
    }
    #if canImport(Glibc)
    let (pid, status) = (info._sifields._sigchld.si_pid, info._sifields._sigchld.si_status)
    #else
    let (pid, status) = (info.si_pid, info.si_status)
    #endif
    return pid == process.processIdentifier ? status : nil  // no pid: still running
}

/// Waits until `process` has ended (see `exitStatus(of:)`); returns its status.
@discardableResult
package func waitForExit(_ process: Process) -> Int32 {
    while true {
        if let status = exitStatus(of: process) { return status }
        usleep(5_000)
    }
}
