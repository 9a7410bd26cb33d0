import Foundation
import Hummingbird
import SluiceCore
import SluiceState
import Synchronization

/// The server's one read-only handle on the checkpoint, opened on first use (the state may appear only
/// with the first run) and kept: LMDB must not be opened twice in one process, so requests share it.
final class CheckpointReader: Sendable {
    let directory: URL
    private let store = Mutex<CheckpointStore?>(nil)

    init(directory: URL) {
        self.directory = directory
    }

    /// The checkpoint.
    /// - Throws: ``APIError`` 503 when there is no readable state yet.
    func open() throws -> CheckpointStore {
        try store.withLock { store in
            if let store { return store }
            do {
                let opened = try CheckpointStore(directory: directory, readOnly: true)
                store = opened
                return opened
            } catch let error as SluiceError {
                throw APIError(.serviceUnavailable, SluiceError.Code.dependencyUnavailable.rawValue, error.message)
            }
        }
    }
}
