import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// How a child process ended, read with `waitid(…, WNOWAIT)`: without reaping it and without Foundation.
///
/// Foundation's `Process` on Linux learns of a child's death from a socket the child inherits; a child
/// started at the same moment from another thread can inherit that socket too, and then the death is never
/// seen: `isRunning` stays true and `waitUntilExit()` spins forever on a zombie
/// (swift-corelibs-foundation#4795). Tests start servers and `sluice` processes concurrently, so they ask
/// the kernel instead.
public struct ProcessExit: Sendable, Hashable {
    /// The exit status, or the signal number when ``signaled``.
    public var status: Int32
    public var signaled: Bool

    public init(status: Int32, signaled: Bool) {
        self.status = status
        self.signaled = signaled
    }

    /// The exit of `process` if it has ended, nil while it runs.
    public static func of(_ process: Process) -> ProcessExit? {
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOHANG | WNOWAIT)
        if result == 0 {
            guard info._sifields._sigchld.si_pid != 0 else { return nil }  // still running
            let code = info.si_code
            return ProcessExit(
                status: info._sifields._sigchld.si_status,
                signaled: code == CLD_KILLED || code == CLD_DUMPED
            )
        }
        // Already reaped (by Foundation, which then knows the status).
        guard errno == ECHILD, !process.isRunning else { return nil }
        return ProcessExit(status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal)
    }

    /// Blocks until `process` has ended (polling every 2 ms) and returns how.
    @discardableResult
    public static func wait(for process: Process) -> ProcessExit {
        while true {
            if let exit = of(process) { return exit }
            usleep(2_000)
        }
    }
}
