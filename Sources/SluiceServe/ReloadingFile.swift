import Foundation
import Logging
import SluiceCore
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A file `sluice serve` reads at start-up and again while it runs, without a restart: the API keys
/// (`serve.keys_file`, ``APIKeyRing``) and the JWKS (`serve.jwt.jwks_file`). Read again when the file
/// changes (its device, inode, size, modification or change time, through symbolic links: an editor's
/// rename and a Kubernetes Secret's swapped `..data` count) or on SIGHUP
/// (``KeyFilesWatch``).
///
/// A file that cannot be read or is malformed at start-up stops the start; later, the value read last stays
/// in use and the problem is logged (a half-written file must not lock every client out), until the file
/// is fixed.
final class ReloadingFile<Value: Sendable>: Sendable {
    struct Stamp: Equatable, Sendable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var modified: Double
        /// The inode's change time: a copy that keeps the size and the modification time still changes it.
        var changed: Double
    }

    private struct State: Sendable {
        var value: Value
        var stamp: Stamp?
        var lastProblem: String?
    }

    let url: URL
    /// The setting that names the file (`serve.keys_file`), for the log.
    let setting: String
    private let load: @Sendable (URL) throws -> Value
    /// What the log says of a value read (`3 keys`).
    let describe: @Sendable (Value) -> String
    private let state: Mutex<State>

    /// Reads the file. Blocks (file I/O).
    /// - Throws: why it cannot be read or is malformed (``SluiceError/Code/configuration``).
    init(
        url: URL,
        setting: String,
        load: @escaping @Sendable (URL) throws -> Value,
        describe: @escaping @Sendable (Value) -> String
    ) throws {
        self.url = url
        self.setting = setting
        self.load = load
        self.describe = describe
        let stamp = Self.stamp(url)
        state = Mutex(State(value: try load(url), stamp: stamp))
    }

    /// The value in use.
    var value: Value { state.withLock { $0.value } }

    /// Reads the file again when it changed since it was read (always, when `force`). Blocks (file I/O):
    /// call it off the cooperative pool.
    /// - Returns: the new value when it was replaced; nil when nothing changed.
    /// - Throws: why the changed file was not taken (the value before stays in use), once per distinct problem.
    func refresh(force: Bool = false) throws -> Value? {
        let stamp = Self.stamp(url)
        guard force || stamp != state.withLock({ $0.stamp }) else { return nil }
        do {
            let value = try load(url)
            state.withLock { $0 = State(value: value, stamp: stamp, lastProblem: nil) }
            return value
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

    /// The file's identity and version; nil when it cannot be read. Symbolic links are followed: a
    /// Kubernetes Secret or ConfigMap is mounted as `keys.yaml -> ..data/keys.yaml`, updated by swapping
    /// `..data`, and the link itself never changes (its own attributes were read before, and a rotation
    /// went unseen until SIGHUP).
    static func stamp(_ url: URL) -> Stamp? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return Stamp(
            device: UInt64(info.st_dev),
            inode: UInt64(info.st_ino),
            size: Int64(info.st_size),
            modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9,
            changed: Double(info.st_ctim.tv_sec) + Double(info.st_ctim.tv_nsec) / 1e9
        )
    }
}

/// Refreshing a ``ReloadingFile`` whatever it holds (``KeyFilesWatch`` keeps several).
protocol RefreshableFile: Sendable {
    var setting: String { get }
    /// What was read, for the log; nil when nothing changed.
    func refreshed(force: Bool) throws -> String?
}

extension ReloadingFile: RefreshableFile {
    func refreshed(force: Bool) throws -> String? { try refresh(force: force).map(describe) }
}
