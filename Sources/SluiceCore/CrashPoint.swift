import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Named points between two durable steps (a store write and the checkpoint write that goes with it),
/// where a test can have the process killed at once, as `kill -9` would, to check that the state and the
/// store still converge (docs/DESIGN.md §4).
///
/// `SLUICE_DEBUG_CRASH_AT=<name>` makes the process send itself SIGKILL the first time it reaches the
/// point `<name>`; `<name>@<n>` the n-th time. Unset (the normal case), reaching a point costs one load of
/// a cached value.
package enum CrashPoint {
    private static let armed: (name: String, occurrence: Int)? = {
        guard let value = ProcessInfo.processInfo.environment["SLUICE_DEBUG_CRASH_AT"], !value.isEmpty else {
            return nil
        }
        let parts = value.split(separator: "@", maxSplits: 1)
        if parts.count == 2, let occurrence = Int(parts[1]), occurrence > 0 { return (String(parts[0]), occurrence) }
        return (value, 1)
    }()

    private static let reached = Mutex(0)

    /// Kills the process with SIGKILL if `SLUICE_DEBUG_CRASH_AT` names this point (and occurrence).
    package static func reach(_ name: String) {
        guard let armed, armed.name == name else { return }
        let count = reached.withLock {
            $0 += 1
            return $0
        }
        guard count == armed.occurrence else { return }
        kill(getpid(), SIGKILL)
        // SIGKILL cannot be caught; this is never reached.
        _exit(137)
    }
}
