import SluiceCore
import Synchronization

/// The first checkpoint read of a run's stages that failed (a damaged record, an unreadable state): the run
/// stops taking documents, lets those in flight settle, and then fails with it (``RunExitCode`` of the error:
/// 1 for a damaged state, with how to recover), never going on as if the checkpoint had said nothing.
package final class StateDamage: Sendable {
    private let first = Mutex<SluiceError?>(nil)

    package init() {}

    /// Keeps `error` if it is the first.
    package func record(_ error: SluiceError) {
        first.withLock { if $0 == nil { $0 = error } }
    }

    package var error: SluiceError? { first.withLock { $0 } }
}
