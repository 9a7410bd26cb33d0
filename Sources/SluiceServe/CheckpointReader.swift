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
final class CheckpointReader: Sendable {
    let directory: URL
    private let store = Mutex<CheckpointStore?>(nil)

    init(directory: URL) {
        self.directory = directory
    }

    /// The checkpoint, or nil when there is no state yet (no run has written one).
    /// - Throws: ``APIError`` 503 `state-corrupt` (with what happened and how to recover) when the state's
    ///   file is truncated or damaged, 503 `dependency-unavailable` when it cannot be opened otherwise.
    func openIfPresent() throws -> CheckpointStore? {
        try store.withLock { store in
            if let store { return store }
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
                return nil
            }
            do {
                let opened = try CheckpointStore(directory: directory, readOnly: true)
                store = opened
                return opened
            } catch let error as SluiceError {
                throw Self.apiError(error)
            }
        }
    }

    /// The checkpoint.
    /// - Throws: ``APIError`` 503 when there is no state yet, or as ``openIfPresent()``.
    func open() throws -> CheckpointStore {
        guard let store = try openIfPresent() else {
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
