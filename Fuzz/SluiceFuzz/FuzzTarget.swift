import Foundation
import SluiceCore
import SluiceExtract
import SluiceSinks
import SluiceState
import SluiceTesting

/// One reader of untrusted bytes, driven by libFuzzer (`scripts/fuzz.sh`). Each target feeds the input to
/// the same code the pipeline runs on a document, a worker's answer or a stored entry. Errors are
/// expected (most inputs are malformed); what the fuzzer looks for is a crash, a trap, a memory error
/// (AddressSanitizer), a hang (`-timeout`) or runaway memory (`-rss_limit_mb`).
enum FuzzTarget: String, CaseIterable {
    case json, csv, html, docx, pptx, xlsx, epub, odt, ods, odp, rtf, text
    case workerProtocol = "worker-protocol"
    case extractionCache = "extraction-cache"
    case localRecord = "local-record"
    case localRecordFields = "local-record-fields"
    case pdfFlate = "pdf-flate"

    func run(_ bytes: [UInt8]) {
        switch self {
        case .json: Self.extract(bytes, with: JSONExtractor(), key: "fuzz.json")
        case .csv: Self.extract(bytes, with: CSVExtractor(), key: "fuzz.csv")
        case .html: Self.extract(bytes, with: HTMLExtractor(), key: "fuzz.html")
        case .docx: Self.extract(bytes, with: DOCXExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.docx")
        case .pptx: Self.extract(bytes, with: PPTXExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.pptx")
        case .xlsx: Self.extract(bytes, with: XLSXExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.xlsx")
        case .epub: Self.extract(bytes, with: EPUBExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.epub")
        case .odt: Self.extract(bytes, with: ODTExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.odt")
        case .ods: Self.extract(bytes, with: ODSExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.ods")
        case .odp: Self.extract(bytes, with: ODPExtractor(maxInflatedBytes: 16 << 20), key: "fuzz.odp")
        case .rtf: Self.extract(bytes, with: RTFExtractor(), key: "fuzz.rtf")
        case .text: Self.extract(bytes, with: TextExtractor(), key: "fuzz.txt")
        case .workerProtocol: Self.workerLines(bytes)
        case .extractionCache: Self.extractionCache(bytes)
        case .localRecord: _ = try? LocalSink.decode(id: Array("fuzz".utf8), bytes)
        case .localRecordFields: Self.localRecordFields(bytes)
        case .pdfFlate:
            Self.flate(bytes)
            Self.flate([0x78, 0x9C] + bytes)  // behind a valid zlib header, so the fuzzer reaches the blocks
        }
    }

    /// A PDF's FlateDecode stream through Sluice's zlib stream (PopplerFlateStream.h), in blocks and byte by
    /// byte, beside poppler's own inflater: zlib's bytes must be a prefix of poppler's (the same on data
    /// both accept; zlib stops first on data only it rejects).
    private static func flate(_ bytes: [UInt8]) {
        let blocks = PDFStreamInflater.zlib.decode(bytes)
        precondition(PDFStreamInflater.zlib.decode(bytes, byteAtATime: true) == blocks, "blocks and bytes differ")
        precondition(PDFStreamInflater.poppler.decode(bytes).starts(with: blocks), "not a prefix")
    }

    /// A local-store record's fields behind a valid vector header (one dimension), as they are and behind
    /// the binary layout's version byte (2), so the fuzzer reaches the fields' reader rather than the
    /// header's checks. What decodes must encode to bytes that decode and encode to the same bytes again
    /// (compared as bytes: a NaN is not equal to itself).
    private static func localRecordFields(_ bytes: [UInt8]) {
        let header: [UInt8] = [1, 0, 0, 0, 0, 0, 0x80, 0x3F]
        for fields in [bytes, [2] + bytes] {
            guard let record = try? LocalSink.decode(id: Array("fuzz".utf8), header + fields) else { continue }
            let encoded = LocalSink.encode(record)
            let again = try? LocalSink.decode(id: Array("fuzz".utf8), encoded)
            precondition(again.map(LocalSink.encode) == encoded, "a decoded record does not round-trip")
        }
    }

    /// The bound on a document's text here (`extract.max_text_mb`): small, so that inputs that multiply
    /// their text (the hostile seeds, ``seeds``) reach it.
    static let maxTextBytes = 1 << 20

    /// As the extract stage does: the extractor is asked whether it takes the bytes, then extracts.
    private static func extract(_ bytes: [UInt8], with extractor: some Extractor, key: String) {
        let input = ExtractionInput(
            key: key,
            fileURL: URL(fileURLWithPath: "/nonexistent/\(key)"),
            bytes: bytes,
            maxTextBytes: maxTextBytes
        )
        _ = extractor.accepts(input)
        if let text = try? extractor.extract(input) {
            // What the chunker reads next must be well-formed, and within the bound (charged as it is made,
            // without the separators between lines: twice the bound is far past any honest count).
            for section in text.sections { precondition(section.text.utf8.count >= 0) }
            precondition(text.utf8Count <= 2 * maxTextBytes, "\(text.utf8Count) bytes of text past the bound")
        }
    }

    /// Inputs that multiply their text by reference or repetition (``HostileDocuments``), small enough for
    /// `-max_len`, for the corpus of this target (`scripts/fuzz.sh` writes them with `SLUICE_FUZZ_SEEDS`).
    var seeds: [HostileDocuments.Document] {
        switch self {
        case .xlsx:
            [
                HostileDocuments.xlsxSharedString(stringBytes: 4_096, cells: 512),
                HostileDocuments.xlsxRepeatedHeader(headerBytes: 4_096, rows: 512),
            ]
        case .pptx: [HostileDocuments.pptxRepeatedSlide(slideBytes: 4_096, times: 512)]
        case .docx: [HostileDocuments.docxRepeatedRuns(paragraphBytes: 1_024, paragraphs: 2_048)]
        case .epub: [HostileDocuments.epubRepeatedChapter(chapterBytes: 4_096, times: 512)]
        case .csv: [HostileDocuments.csvRepeatedHeader(headerBytes: 4_096, rows: 512)]
        case .json: [HostileDocuments.jsonRepeatedKey(keyBytes: 4_096, values: 512)]
        default: []
        }
    }

    /// The worker protocol as both ends read it: lines framed by ``LineReader`` from a pipe, each decoded
    /// as a request (the worker's side) and as a response (the pool's side).
    private static func workerLines(_ bytes: [UInt8]) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        defer { close(fds[0]) }
        // Inputs are at most libFuzzer's -max_len (4,096 by default), under a pipe's 64 KiB buffer.
        _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        close(fds[1])
        var reader = LineReader(fd: fds[0])
        while case .line(let line)? = reader.next(deadline: nil) {
            _ = ExtractWorkerProtocol.decodeRequest(line)
            _ = ExtractWorkerProtocol.decodeResponse(line)
        }
    }

    /// The extraction cache's decoder, twice: on the raw input (almost always a checksum miss), and on the
    /// input as a payload behind a valid header, so the fuzzer reaches the payload parser. What decodes
    /// must encode back to the same bytes.
    private static func extractionCache(_ bytes: [UInt8]) {
        _ = ExtractedTextCoding.decode(bytes)
        let framed = ExtractedTextCoding.frame(payload: bytes)
        if let text = ExtractedTextCoding.decode(framed) {
            precondition(ExtractedTextCoding.decode(ExtractedTextCoding.encode(text)) == text, "round trip")
        }
    }
}
