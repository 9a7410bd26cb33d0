import CPopplerText
import Foundation

/// The two inflaters of PDF FlateDecode streams in this process (PopplerFlateStream.h), for tests and the
/// fuzzer: poppler's own, and the zlib stream that Sluice's executables put in its place.
package enum PDFStreamInflater: Sendable, CaseIterable {
    /// poppler's built-in inflater (what `pdftotext` uses).
    case poppler
    /// Sluice's stream on zlib.
    case zlib

    /// Decodes the bytes of a FlateDecode stream (zlib format) through poppler's stream interface, in blocks
    /// or one `getChar` at a time.
    package func decode(_ bytes: [UInt8], byteAtATime: Bool = false) -> [UInt8] {
        var length = 0
        let decoded = bytes.withUnsafeBufferPointer {
            sluice_pdf_flate_decode(
                $0.baseAddress,
                $0.count,
                self == .zlib ? SLUICE_PDF_FLATE_ZLIB : SLUICE_PDF_FLATE_POPPLER,
                byteAtATime ? 1 : 0,
                &length
            )
        }
        guard let decoded else { return [] }
        defer { free(decoded) }
        return Array(UnsafeBufferPointer(start: decoded, count: length))
    }

    /// How many streams this process has inflated with zlib so far (0 where poppler's inflater was not
    /// replaced).
    package static var zlibStreamsInflated: Int { sluice_pdf_flate_streams_inflated() }
}
