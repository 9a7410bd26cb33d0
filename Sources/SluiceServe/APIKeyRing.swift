import Foundation
import Logging
import SluiceCore
import Synchronization

/// The keys `sluice serve` accepts (`serve.keys_file`, docs/ACCESS.md), read again when the file changes
/// (its device, inode, size or modification time: an editor's rename counts) or on SIGHUP
/// (``APIKeyRingWatch``), without a restart.
///
/// A file that cannot be read or is malformed at start-up stops the start; later, the keys read last stay
/// in use and the problem is logged (a half-written file must not lock every client out), until the file
/// is fixed.
final class APIKeyRing: Sendable {
    struct Stamp: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Double
    }

    private struct State: Sendable {
        var keys: APIKeys
        var stamp: Stamp?
        var lastProblem: String?
    }

    let url: URL
    private let state: Mutex<State>

    /// Reads the file. Blocks (file I/O).
    /// - Throws: ``SluiceError/Code/configuration`` when it cannot be read or is malformed.
    init(url: URL) throws {
        self.url = url
        let stamp = Self.stamp(url)
        state = Mutex(State(keys: try APIKeys.load(url), stamp: stamp))
    }

    /// The keys in use.
    var keys: APIKeys { state.withLock { $0.keys } }

    /// Reads the file again when it changed since it was read (always, when `force`). Blocks (file I/O):
    /// call it off the cooperative pool.
    /// - Returns: the number of keys when they were replaced; nil when nothing changed.
    /// - Throws: why the changed file was not taken (the keys before stay in use), once per distinct problem.
    func refresh(force: Bool = false) throws -> Int? {
        let stamp = Self.stamp(url)
        guard force || stamp != state.withLock({ $0.stamp }) else { return nil }
        do {
            let keys = try APIKeys.load(url)
            state.withLock { $0 = State(keys: keys, stamp: stamp, lastProblem: nil) }
            return keys.keys.count
        } catch {
            let problem = "\(error)"
            let repeated = state.withLock { current in
                defer {
                    current.stamp = stamp
                    current.lastProblem = problem
                }
                return current.lastProblem == problem
            }
            if repeated { return nil }
            throw error
        }
    }

    /// The file's identity and version; nil when it cannot be read.
    static func stamp(_ url: URL) -> Stamp? {
        guard let info = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        return Stamp(
            device: (info[.deviceIdentifier] as? NSNumber)?.uint64Value ?? 0,
            inode: (info[.systemFileNumber] as? NSNumber)?.uint64Value ?? 0,
            size: (info[.size] as? NSNumber)?.int64Value ?? 0,
            modified: (info[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        )
    }
}
