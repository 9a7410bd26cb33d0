import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Named points between two durable steps (a store write and the checkpoint write that goes with it),
/// where a test can have the process killed at once, as `kill -9` would, to check that the state and the
/// store still converge (docs/DESIGN.md §4).
///
/// `SLUICE_DEBUG_CRASH_AT=<name>` makes the process send itself SIGKILL the first time it reaches the
/// point `<name>`; unset (the normal case), reaching a point costs one load of a cached value.
package enum CrashPoint {
    private static let armed: String? = {
        guard let name = ProcessInfo.processInfo.environment["SLUICE_DEBUG_CRASH_AT"], !name.isEmpty else { return nil }
        return name
    }()

    /// Kills the process with SIGKILL if `SLUICE_DEBUG_CRASH_AT` names this point.
    package static func reach(_ name: String) {
        guard let armed, armed == name else { return }
        kill(getpid(), SIGKILL)
        // SIGKILL cannot be caught; this is never reached.
        _exit(137)
    }
}
