import Foundation
import SluiceExtract

/// Whether a file's first bytes are something the extractors read whatever its name: UTF-8 text (no NUL),
/// a PDF, an image, an RTF document or an OpenDocument package (whose `mimetype` entry comes first). What a
/// walk tells of the files `source.include` passed over (``LeftOutFiles``).
///
/// Compressed files (`changelog.Debian.gz`) are not: no extractor decompresses, so they are left out
/// without a hint (decompress them into the source to index them). Office Open XML and EPUB containers are
/// ZIP files whose first bytes do not say which: they are not suggested either.
enum ReadableContent {
    /// How many bytes are read.
    static let prefixBytes = 4096

    static func looksReadable(_ url: URL) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: url.path) else { return false }
        defer { try? handle.close() }
        guard let data = try? handle.read(upToCount: prefixBytes), !data.isEmpty else { return false }
        return looksReadable(Array(data))
    }

    static func looksReadable(_ bytes: [UInt8]) -> Bool {
        let format = FormatSniffer.sniff(bytes)
        if format == .pdf || format == .rtf || format.isImage { return true }
        if format == .zip { return FormatSniffer.openDocumentFormat(bytes) != nil }
        guard format == .text, !bytes.contains(0) else { return false }
        // Valid UTF-8, but for a character the prefix cut (up to 3 bytes of it).
        let cut = bytes.count == prefixBytes ? 3 : 0
        return (0...cut).contains { String(bytes: bytes.dropLast($0), encoding: .utf8) != nil }
    }
}
