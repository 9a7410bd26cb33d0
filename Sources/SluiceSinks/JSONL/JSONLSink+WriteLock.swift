import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

extension JSONLSink {
    /// One writer at a time on a JSONL store: an exclusive, non-blocking `flock` on a file beside it
    /// (`vectors.jsonl.lock`, `parts.lock` for a folder), held while the writable sink lives and released by
    /// the kernel if the process dies. The store is held in memory and its files rewritten at the end of a
    /// run, so two writers (shards started together into one store, session 47's campaign) each rewrote
    /// them from their own copy, and one's vectors were lost while both exited 0. The lock goes with the
    /// sink's `deinit`, which may run on its executor's thread a moment after the last call returned: a
    /// writable store opened again at once in the same process can find it still held (Sluice's commands open
    /// one writer a process; `serve`'s runs are processes of their own).
    final class WriteLock: Sendable {
        private let descriptor: Int32

        /// Takes the lock or throws ``SluiceError/Code/lockHeld`` at once.
        init(_ layout: Layout) throws {
            // Beside the store, never inside it: its folder is made by the first write and removed by a
            // generation's drop, and a lock must not bring it back.
            let url = URL(fileURLWithPath: layout.root.path + ".lock")
            try? FileManager.default.createDirectory(
                at: layout.root.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            let fd = open(url.path, O_CREAT | O_RDWR | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                throw SluiceError(
                    .configuration,
                    "cannot open the JSONL store's lock \(url.path): \(String(cString: strerror(errno)))"
                )
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                throw SluiceError(
                    .lockHeld,
                    "another process writes the JSONL store at \(layout.root.path) (one writer at a time: shards that run together need a store that takes many writers, docs/STORES.md); not starting"
                )
            }
            descriptor = fd
        }

        deinit {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
    }
}
