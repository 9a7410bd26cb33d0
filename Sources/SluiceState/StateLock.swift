import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// An exclusive, non-blocking lock on a state folder, held for a whole run (an advisory `flock` on
/// `run.lock`, released by the kernel if the process dies, so a kill -9 never leaves a stale lock).
package final class StateLock: Sendable {
    private let descriptor: Int32
    package let url: URL

    /// Takes the lock or throws ``SluiceError/Code/lockHeld`` at once.
    /// - Parameter shared: Take it shared (`LOCK_SH`): many holders at once, none beside an exclusive one
    ///   (the shards' runs of one deployment with generations, beside a `sluice generation` change).
    package init(directory: URL, shared: Bool = false) throws {
        // What is wrong here is the user's to fix (exit 1), not a bug: a file where the state folder
        // should be, a folder where the lock file should be, no permission.
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isFolder), !isFolder.boolValue {
            throw SluiceError(
                .configuration,
                "the state folder \(directory.path) is a file, not a folder: point `state` (or --state) at a folder"
            )
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw SluiceError(
                .configuration,
                "cannot create the state folder \(directory.path): \((error as NSError).localizedDescription)"
            )
        }
        url = directory.appendingPathComponent("run.lock")
        let fd = open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            let reason =
                errno == EISDIR ? "it is a folder, not the lock file: remove it" : String(cString: strerror(errno))
            throw SluiceError(.configuration, "cannot open the state lock \(url.path): \(reason)")
        }
        if flock(fd, (shared ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0 {
            // Only the message's "(pid …)": the lock itself, not this text, says the state is held.
            let holder =
                (try? String(contentsOf: url, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(fd)
            throw SluiceError(
                .lockHeld,
                "another run holds the lock on \(directory.path)\(holder.isEmpty ? "" : " (\(holder))"); not starting"
            )
        }
        descriptor = fd
        guard !shared else { return }
        let note = "pid \(getpid()) since \(ISO8601DateFormatter().string(from: Date()))\n"
        ftruncate(fd, 0)
        _ = note.withCString { write(fd, $0, strlen($0)) }
    }

    /// Takes the lock, or nil at once when another process holds it: for work that is skipped while a run or
    /// a change holds the state (it is done again by that run or change, or by the next command).
    /// - Throws: ``SluiceError/Code/configuration`` as ``init(directory:shared:)`` does, for all but a held lock.
    package static func unlessHeld(directory: URL, shared: Bool = false) throws -> StateLock? {
        do {
            return try StateLock(directory: directory, shared: shared)
        } catch let error as SluiceError where error.code == .lockHeld {
            return nil
        }
    }

    deinit {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
