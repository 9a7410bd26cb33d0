import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Which file a path named when the source was scanned: its device and inode.
public struct FileIdentity: Sendable, Hashable, Codable {
    public var device: UInt64
    public var inode: UInt64

    public init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }
}

/// A document's file, opened for reading the way the scanner saw it: the last component of the path is
/// not followed if it is a symbolic link (unless the scanner followed it: `source.follow_symlinks`), the
/// opened descriptor must be a regular file, and, when the scan recorded it, the same file (device and
/// inode) the scanner listed. A file replaced by a link to a secret between the scan and the read (or a
/// folder above it replaced) is refused instead of read.
///
/// Every place that reads a document's bytes opens it through this type: the pipeline (hash and text
/// extractors), the PDF extractor in process, and the extract worker processes, which reopen the file by
/// path. C libraries that want a path get ``procPath``, which names this very descriptor.
public final class DocumentFile: Sendable {
    public let descriptor: Int32
    /// The path it was opened by (for messages).
    public let path: String

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// `/proc/self/fd/N`: opening it opens this file again, whatever is at ``path`` now.
    public var procPath: String { "/proc/self/fd/\(descriptor)" }

    /// Opens the file at `path` for reading.
    ///
    /// - Parameters:
    ///   - identity: The file the scan listed; another one at the path now is refused.
    ///   - followSymlink: Whether a symbolic link at the path is followed (the scanner followed it).
    /// - Throws: ``SluiceError/Code/unreadable`` with the reason: permission denied, replaced by a symbolic
    ///   link, no longer a regular file, replaced by another file.
    public static func open(
        _ path: String,
        identity: FileIdentity? = nil,
        followSymlink: Bool = false
    ) throws -> DocumentFile {
        // O_NONBLOCK: a file replaced by a named pipe must not block the open.
        let flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (followSymlink ? 0 : O_NOFOLLOW)
        var fd: Int32
        repeat { fd = Glibc.open(path, flags) } while fd < 0 && errno == EINTR
        guard fd >= 0 else {
            switch errno {
            case EACCES: throw SluiceError(.unreadable, "cannot open file: permission denied")
            case ELOOP:
                throw SluiceError(.unreadable, "the file was replaced by a symbolic link since the scan; not followed")
            default: throw SluiceError(.unreadable, "cannot open file: \(String(cString: strerror(errno)))")
            }
        }
        let file = DocumentFile(descriptor: fd, path: path)
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw SluiceError(.unreadable, "cannot stat file: \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw SluiceError(
                .unreadable,
                "the file was replaced since the scan and is no longer a regular file; not read"
            )
        }
        if let identity, identity != FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)) {
            throw SluiceError(
                .unreadable,
                "the file was replaced by another file since the scan; not read (it is read on the next run)"
            )
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        return file
    }

    /// Reads the whole file (a file that grew since it was opened is read to its end).
    public func readAll() throws -> [UInt8] {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw SluiceError(.unreadable, "cannot stat file: \(String(cString: strerror(errno)))")
        }
        // Read exactly the size stat reported, into storage that is not zeroed first.
        let size = Int(info.st_size)
        var bytes = try [UInt8](unsafeUninitializedCapacity: size) { storage, filled in
            while filled < size {
                let n = read(descriptor, storage.baseAddress! + filled, size - filled)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SluiceError(.unreadable, "read failed: \(String(cString: strerror(errno)))")
                }
                if n == 0 { return }  // the file shrank since stat
                filled += n
            }
        }
        if bytes.count < size { return bytes }
        // A file that grew since is read on in 64 KiB steps (usually one read that finds the end).
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 65_536) { more in
            while true {
                let n = read(descriptor, more.baseAddress!, more.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw SluiceError(.unreadable, "read failed: \(String(cString: strerror(errno)))")
                }
                if n == 0 { return }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: more[..<n]))
            }
        }
        return bytes
    }
}
