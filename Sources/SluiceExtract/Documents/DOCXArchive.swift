import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif
internal import ZIPFoundation

/// The parts of a DOCX (a ZIP archive) read with limits that hold while inflating: the total inflated
/// size, and the ratio of inflated to compressed bytes of each part. A zip bomb fails at the first
/// buffer past a limit, without ever being inflated whole.
struct DOCXArchive {
    /// Limits on inflation.
    struct Limits: Sendable, Hashable {
        /// Most bytes inflated from the archive in all.
        var maxInflatedBytes: Int
        /// Most inflated bytes per compressed byte of a part (ordinary DOCX parts are below 30).
        var maxCompressionRatio: Double
        /// Parts smaller than this are not held to the ratio (tiny parts of white space compress well).
        var ratioGraceBytes = 1 << 20
    }

    private let archive: Archive
    private let limits: Limits
    private var inflated = 0

    init(bytes: [UInt8], limits: Limits) throws {
        do {
            archive = try Self.open(bytes)
        } catch let error as SluiceError {
            throw error
        } catch {
            throw SluiceError(.malformed, "not a readable ZIP archive (corrupt or truncated DOCX)", cause: error)
        }
        self.limits = limits
    }

    /// The archive over `bytes`, file-backed. ZIPFoundation's in-memory archive (`Archive(data:)`, 0.9.20)
    /// traps when an entry's offset points past the end of the data (its `MemoryFile.readData` computes a
    /// negative length: found by `scripts/fuzz.sh`); a file-backed archive reads nothing there and throws.
    /// The bytes go to a temporary file that is unlinked as soon as the archive has it open (a DOCX is
    /// small beside its XML parsing).
    private static func open(_ bytes: [UInt8]) throws -> Archive {
        var template = Array(FileManager.default.temporaryDirectory.appendingPathComponent("sluice-docx-XXXXXX").path.utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else {
            throw SluiceError(.io, "cannot create a temporary file for the DOCX: \(String(cString: strerror(errno)))")
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer {
            close(fd)
            unlink(path)
        }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw SluiceError(.io, "cannot write the DOCX to a temporary file: \(String(cString: strerror(errno)))") }
            written += n
        }
        return try Archive(url: URL(fileURLWithPath: path), accessMode: .read)
    }

    /// Whether the archive holds a part.
    func contains(_ path: String) -> Bool { archive[path] != nil }

    /// Inflates one part, or returns `nil` if the archive has none by that name.
    /// - Throws: ``SluiceError/Code/zipBomb`` when a limit is passed, ``SluiceError/Code/malformed`` when
    ///   the part cannot be inflated.
    mutating func part(_ path: String) throws -> [UInt8]? {
        guard let entry = archive[path] else { return nil }
        var bytes: [UInt8] = []
        var total = inflated
        let limits = limits
        let compressed = max(entry.compressedSize, 1)
        do {
            _ = try archive.extract(entry, bufferSize: 64 * 1024, skipCRC32: false) { data in
                bytes.append(contentsOf: data)
                total += data.count
                if total > limits.maxInflatedBytes {
                    throw SluiceError(
                        .zipBomb,
                        "\(path) inflates past extract.docx.max_inflated_mb (\(limits.maxInflatedBytes / 1_048_576) MB) from \(entry.compressedSize) compressed bytes; refused as a zip bomb")
                }
                let ratio = Double(bytes.count) / Double(compressed)
                if bytes.count > limits.ratioGraceBytes && ratio > limits.maxCompressionRatio {
                    throw SluiceError(
                        .zipBomb,
                        "\(path) inflates more than \(Int(limits.maxCompressionRatio)) times its compressed size (\(entry.compressedSize) bytes → over \(bytes.count) bytes), over extract.docx.max_compression_ratio; refused as a zip bomb")
                }
            }
        } catch let error as SluiceError {
            throw error
        } catch {
            throw SluiceError(.malformed, "cannot inflate \(path): \(error)", cause: error)
        }
        inflated = total
        return bytes
    }
}
