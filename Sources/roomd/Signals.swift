import Foundation
import RoomServer

/// SIGTERM/SIGINT handling without work in a signal handler: the signals are
/// blocked before any other thread exists (threads inherit the mask), and one
/// thread `sigwait`s for them, then asks the server to shut down (which posts
/// to its inbox and wakes the loop).
enum Signals {
    /// Call first thing on the main thread, before any thread is started.
    static func block() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    static func install(_ server: RoomServer) {
        let thread = Thread { waitForSignal(server) }
        thread.name = "roomd-signals"
        thread.start()
    }
}

private func waitForSignal(_ server: RoomServer) {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigaddset(&set, SIGINT)
    var signal: Int32 = 0
    while sigwait(&set, &signal) != 0 {}
    server.shutdown()
}
