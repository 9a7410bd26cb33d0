import Dispatch
import Foundation
import SluiceCore
import SluiceLMDB
import Synchronization

/// The thread that merges the local store's keyword segments after the writes that add them
/// (`KeywordIndex+Merging.swift`), so that the store's writer thread only writes each batch's segment.
///
/// A pass merges until the policy asks for nothing more. Passes run one at a time, in a serial queue; asking
/// for one while another waits to start does nothing (the waiting pass sees every write committed before it
/// starts), so at most one runs and one waits.
///
/// LMDB re-initializes an environment's lock-file mutexes when the environment is opened and this process
/// holds the only file lock, which is always the case when the same process opens it a second time: a mutex
/// held by a merge transaction at that moment is corrupted (seen as crashes in `pthread_mutex_lock` on the
/// merge thread when a test opened the store again while merges ran). Merge passes and the local store's
/// opens therefore exclude each other through ``openGate``, process-wide.
///
/// A pass that fails is recorded in ``failures`` (`KeywordMergeFailures.swift`), never swallowed.
final class KeywordMerger: @unchecked Sendable {
    /// Held by a merge pass while it runs, and by `LocalSink.init` while it opens its environment.
    static let openGate = Mutex(())

    // All are thread-safe; the class only owns them.
    private let queue = DispatchQueue(label: "sl-local-keyword-merge")
    private let waiting = Mutex(false)
    /// The passes that failed (`KeywordMergeFailures.swift`).
    let failures = Mutex(KeywordMergeFailures())
    /// For tests: runs before each merge of a pass, and fails the pass when it throws. Set from
    /// `SLUICE_DEBUG_KEYWORD_MERGE_FAILURE` (`io`: an I/O error; `map-full`: a full map) for the CLI's tests.
    let fault = Mutex<(@Sendable () throws -> Void)?>(KeywordMerger.debugFault)

    /// The fault `SLUICE_DEBUG_KEYWORD_MERGE_FAILURE` names, if any (read once per process).
    private static let debugFault: (@Sendable () throws -> Void)? = {
        switch ProcessInfo.processInfo.environment["SLUICE_DEBUG_KEYWORD_MERGE_FAILURE"] {
        case "io": return { throw SluiceError(.sinkFailed, "keyword merge: mdb_put: Input/output error") }
        case "map-full":
            return {
                throw SluiceError(
                    .sinkFailed,
                    "keyword merge: mdb_put: the LMDB map is full (raise the map size)",
                    cause: LMDBMapFull()
                )
            }
        default: return nil
        }
    }()

    /// Runs one pass of `merge` (one merge per call, true while there may be more), recording its failure.
    func runPass(_ merge: () throws -> Bool) {
        guard failures.withLock({ $0.mayMerge }) else { return }
        do {
            while true {
                try fault.withLock { $0 }?()
                guard try merge() else { break }
            }
            failures.withLock { $0.succeeded() }
        } catch {
            _ = failures.withLock { $0.failed(error) }
        }
    }

    /// Runs `pass` on the merge thread unless a pass is already waiting to start.
    func request(_ pass: @escaping @Sendable () -> Void) {
        let queued = waiting.withLock { waiting in
            if waiting { return false }
            waiting = true
            return true
        }
        guard queued else { return }
        queue.async {
            self.waiting.withLock { $0 = false }
            pass()
        }
    }

    /// Returns once every pass requested before has run. Never call it on the merge thread, nor inside a
    /// write transaction (a pass may wait for that transaction's lock).
    func settle() { queue.sync {} }

    /// For tests: the merge thread runs nothing more until `gate` is signalled.
    func hold(until gate: DispatchSemaphore) { queue.async { gate.wait() } }
}
