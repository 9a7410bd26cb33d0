import Foundation
import Hummingbird
import SluiceCore
import SluiceState
import Synchronization

/// The server's one read-only handle on the checkpoint, opened on first use (the state may appear only
/// with the first run) and kept: LMDB must not be opened twice in one process, so requests share it.
///
/// Every read of the state by the server goes through here, and none is taken for "nothing there" when it
/// fails: no state yet (a fresh index) is ``openIfPresent()``'s nil, a damaged one is an error that says how
/// to recover (`state-corrupt`, 503), as `sluice run` says it.
///
/// The document records read are those of the served index generation (docs/GENERATIONS.md): the one
/// `activeGeneration` names, or the one a request took with its store (``ServedGeneration/snapshot``).
final class CheckpointReader: Sendable {
    let directory: URL
    private let store = Mutex<CheckpointStore?>(nil)
    /// The generation `sluice serve` serves now (nil: the original one).
    private let activeGeneration: @Sendable () -> String?

    init(directory: URL, activeGeneration: @escaping @Sendable () -> String? = { nil }) {
        self.directory = directory
        self.activeGeneration = activeGeneration
    }

    /// The checkpoint, seen as the store of `generation` (the served one when not given), or nil when
    /// there is no state yet (no run has written one).
    /// - Throws: ``APIError`` 503 `state-corrupt` (with what happened and how to recover) when the state's
    ///   file is truncated or damaged, 503 `dependency-unavailable` when it cannot be opened otherwise.
    func openIfPresent(generation: String?? = nil) throws -> CheckpointStore? {
        let generation = generation ?? activeGeneration()
        return try store.withLock { store in
            do {
                if let store { return try store.viewing(generation: generation) }
                guard CheckpointStore.exists(at: directory) else { return nil }
                let opened = try CheckpointStore(directory: directory, readOnly: true)
                store = opened
                return try opened.viewing(generation: generation)
            } catch let error as SluiceError {
                throw Self.apiError(error)
            }
        }
    }

    /// The checkpoint, seen as the store of `generation` (the served one when not given).
    /// - Throws: ``APIError`` 503 when there is no state yet, or as ``openIfPresent(generation:)``.
    func open(generation: String?? = nil) throws -> CheckpointStore {
        guard let store = try openIfPresent(generation: generation) else {
            throw APIError(
                .serviceUnavailable,
                SluiceError.Code.dependencyUnavailable.rawValue,
                "no state at \(directory.path) yet: run the pipeline first"
            )
        }
        return store
    }

    /// A damaged state (`state-corrupt`: its file, or a record that does not decode) keeps its code and its
    /// advice; any other failure to open or read it is `dependency-unavailable`. Both are 503: the server
    /// cannot answer from its state until it is restored or repaired.
    static func apiError(_ error: SluiceError) -> APIError {
        let code = error.code == .stateCorrupt ? error.code : .dependencyUnavailable
        return APIError(.serviceUnavailable, code.rawValue, error.message)
    }
}
