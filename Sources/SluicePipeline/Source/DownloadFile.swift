import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// Writes a download's body into a private file (mode 0600) as it arrives, for the remote sources (an S3
/// object, a web page): writes run on `writer`'s thread, in pieces of up to 1 MiB, off the cooperative pool.
enum DownloadFile {
    /// Streams `body` into `path` (created or truncated, mode 0600).
    /// - Returns: the bytes written.
    /// - Throws: what the stream throws (a transfer cut short, `too-large` past the request's limit), or
    ///   ``SluiceError/Code/io`` / ``SluiceError/Code/diskFull`` for a write that fails.
    static func write(
        _ body: AsyncThrowingStream<[UInt8], any Error>,
        to path: String,
        writer: BlockingExecutor
    ) async throws -> Int {
        let fd = try await writer.run { () -> Int32 in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw SluiceError(.io, "cannot create \(path): \(String(cString: strerror(errno)))")
            }
            return fd
        }
        defer { close(fd) }
        var written = 0
        var pending: [UInt8] = []
        pending.reserveCapacity(1 << 20)
        func flush() async throws {
            guard !pending.isEmpty else { return }
            let bytes = pending
            pending.removeAll(keepingCapacity: true)
            try await writer.run { try writeAll(fd, bytes, path: path) }
        }
        for try await chunk in body {
            pending += chunk
            written += chunk.count
            if pending.count >= 1 << 20 { try await flush() }
        }
        try await flush()
        return written
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    let code: SluiceError.Code = errno == ENOSPC ? .diskFull : .io
                    throw SluiceError(code, "writing \(path): \(String(cString: strerror(errno)))")
                }
                offset += n
            }
        }
    }

    /// A path in `directory` (created 0700 when missing) for a download of `name`, keeping its last
    /// component's name and extension (extractors look at it), made safe and unique.
    static func path(in directory: URL, for name: String, writer: BlockingExecutor) async throws -> String {
        try await writer.run {
            try FileManager.default.createDirectory(
                at: directory,
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        let base = name.split(separator: "/").last.map(String.init) ?? "object"
        let safe = String(base.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "_" }.suffix(80))
        return directory.appendingPathComponent("\(UInt64.random(in: 0...UInt64.max))-\(safe)").path
    }

    /// The file at `path` as a ``SourceFile`` of `key` (its identity and mtime as written), deleted on
    /// discard.
    static func materialized(key: String, path: String, size: Int) throws -> MaterializedFile {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw SluiceError(.io, "the download of \(key) is gone from \(path)")
        }
        var local = SourceFile(
            key: key,
            url: URL(fileURLWithPath: path),
            size: size,
            mtimeNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        )
        local.identity = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return MaterializedFile(file: local) { unlink(path) }
    }
}
