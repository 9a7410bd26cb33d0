import Foundation
import SluiceCore
import SluiceExtract
import SluiceState

#if canImport(Glibc)
import Glibc
#endif

/// Reads a document, hashes its bytes (XXH3-128) and, unless they match what is indexed, extracts its
/// text. Reading and extraction run on the extract executor's threads, with a per-document time limit.
package struct ExtractStep: Sendable {
    package let registry: ExtractorRegistry
    package let executor: BlockingExecutor
    package let maxBytes: Int
    package let timeout: Duration
    package let tally: RunTally

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        if document.file.size > maxBytes {
            document.fail(
                SluiceError(.tooLarge, "file is \(Self.megabytes(document.file.size)) MB, over extract.max_file_mb (\(Self.megabytes(maxBytes)) MB)"),
                as: .tooLarge)
            return document
        }
        let url = document.file.url
        let key = document.file.key
        let bytes: [UInt8]
        do {
            bytes = try await executor.run { try Self.readFile(url) }
        } catch {
            document.fail(error, as: .unreadable)
            return document
        }
        tally.update { $0.bytesRead += bytes.count }
        let hash = ContentHash(of: bytes)
        document.contentHash = hash
        document.file.size = bytes.count
        if let previous = document.previous, previous.status == .indexed, previous.contentHash == hash {
            document.outcome = .unchanged
            return document
        }
        let input = ExtractionInput(key: key, fileURL: url, bytes: bytes)
        guard let extractor = registry.extractor(for: input) else {
            document.fail(SluiceError(.unsupportedFormat, "no extractor accepts this file"), as: .unsupportedFormat)
            return document
        }
        do {
            let text = try await withDeadline(timeout, what: "extraction (\(extractor.name))") { [executor] in
                try await executor.run { try extractor.extract(input) }
            }
            document.text = text
        } catch {
            document.fail(error, as: .extractionFailed)
        }
        return document
    }

    /// Reads a whole file with POSIX calls (clear errors for permissions and folders).
    static func readFile(_ url: URL) throws -> [UInt8] {
        let fd = open(url.path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno == EACCES ? "permission denied" : String(cString: strerror(errno))
            throw SluiceError(.unreadable, "cannot open file: \(reason)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw SluiceError(.unreadable, "cannot stat file: \(String(cString: strerror(errno)))") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while true {
            if filled == bytes.count { bytes.append(contentsOf: [UInt8](repeating: 0, count: max(4096, bytes.count / 2))) }
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + filled, $0.count - filled) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SluiceError(.unreadable, "read failed: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            filled += n
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f", Double(bytes) / 1_048_576) }
}

/// Runs `body`, failing with ``SluiceError/Code/timeout`` if it takes longer than `limit`. A blocking call
/// cannot be stopped from outside: the document fails at the deadline and the call's result is dropped.
package func withDeadline<T: Sendable>(
    _ limit: Duration, what: String, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        while let next = try await group.next() {
            if let value = next { return value }
            throw SluiceError(.timeout, "\(what) took longer than \(limit.seconds) s (extract.timeout_seconds)")
        }
        throw SluiceError(.timeout, "\(what) ended without a result")
    }
}
