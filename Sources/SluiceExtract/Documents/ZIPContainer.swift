import Foundation
import SluiceCore

/// The parts of a ZIP-based document (DOCX, PPTX, XLSX, EPUB: every format whose container is a ZIP
/// archive) read with limits that hold while inflating (`extract.zip.*`): the total inflated size, and the
/// ratio of inflated to compressed bytes of each part. A zip bomb fails at the first buffer past a limit,
/// without ever being inflated whole.
struct ZIPContainer {
    /// Limits on inflation.
    struct Limits: Sendable, Hashable {
        /// Most bytes inflated from the archive in all.
        var maxInflatedBytes: Int
        /// Most inflated bytes per compressed byte of a part (ordinary Office and EPUB parts are below 30).
        var maxCompressionRatio: Double
        /// Parts smaller than this are not held to the ratio (tiny parts of white space compress well).
        var ratioGraceBytes = 1 << 20
    }

    private let archive: ZIPArchive
    private let limits: Limits
    private var inflated = 0

    init(bytes: [UInt8], limits: Limits) throws {
        archive = try ZIPArchive(bytes: bytes)
        self.limits = limits
    }

    /// Whether the archive holds a part.
    func contains(_ path: String) -> Bool { archive.entries[path] != nil }

    /// Inflates one part, or returns `nil` if the archive has none by that name.
    /// - Throws: ``SluiceError/Code/zipBomb`` when a limit is passed, ``SluiceError/Code/malformed`` when
    ///   the part cannot be inflated.
    mutating func part(_ path: String) throws -> [UInt8]? {
        guard let entry = archive.entries[path] else { return nil }
        var bytes: [UInt8] = []
        var total = inflated
        let limits = limits
        let compressed = max(entry.compressedSize, 1)
        try archive.read(entry) { data in
            bytes.append(contentsOf: data)
            total += data.count
            if total > limits.maxInflatedBytes {
                throw SluiceError(
                    .zipBomb,
                    "\(path) inflates past extract.zip.max_inflated_mb (\(limits.maxInflatedBytes / 1_048_576) MB) from \(entry.compressedSize) compressed bytes; refused as a zip bomb"
                )
            }
            let ratio = Double(bytes.count) / Double(compressed)
            if bytes.count > limits.ratioGraceBytes && ratio > limits.maxCompressionRatio {
                throw SluiceError(
                    .zipBomb,
                    "\(path) inflates more than \(Int(limits.maxCompressionRatio)) times its compressed size (\(entry.compressedSize) bytes → over \(bytes.count) bytes), over extract.zip.max_compression_ratio; refused as a zip bomb"
                )
            }
        }
        inflated = total
        return bytes
    }
}
