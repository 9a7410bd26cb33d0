import Foundation
import SluiceCore

/// The messages between the pipeline and its extract worker processes: one JSON object per line,
/// requests on the worker's standard input, responses on its standard output (JSON escapes line breaks
/// inside strings, so a line is always one message).
public enum ExtractWorkerProtocol {
    /// What the worker is started with (as one JSON argument): the extraction settings.
    public struct Options: Codable, Sendable, Hashable {
        public var ocr: PipelineConfiguration.Extract.OCR
        public var pdf: PipelineConfiguration.Extract.PDF
        /// How many PDFs a worker keeps open (``ExtractWorkerPool`` sets its size: the documents in flight).
        public var openDocuments: Int

        public init(
            ocr: PipelineConfiguration.Extract.OCR,
            pdf: PipelineConfiguration.Extract.PDF,
            openDocuments: Int = 1
        ) {
            self.ocr = ocr
            self.pdf = pdf
            self.openDocuments = openDocuments
        }
    }

    public struct Request: Codable, Sendable {
        public enum Kind: String, Codable, Sendable {
            /// Page count, title and author of a PDF, and the text of its first pages: up to `count`, and
            /// no more once `budgetMilliseconds` have passed since the request arrived (at least one).
            case pdfInfo = "pdf-info"
            /// The text of pages `first ..< first + count` of a PDF (OCR'd where the options say).
            case pdfPages = "pdf-pages"
            /// OCR of an image file.
            case image
        }

        public var id: Int
        public var kind: Kind
        public var path: String
        public var first: Int?
        public var count: Int?
        public var budgetMilliseconds: Int?
        /// The file the parent read (device, inode): the worker refuses another one at `path`.
        public var identity: FileIdentity?
        /// Whether `path` is a symbolic link the scanner followed (else a link there is not opened).
        public var followSymlink: Bool?

        /// Opens `path` as the parent read it (see ``DocumentFile``).
        func openFile() throws -> DocumentFile {
            try DocumentFile.open(path, identity: identity, followSymlink: followSymlink ?? false)
        }
    }

    public struct ImageResult: Codable, Sendable {
        public var text: String
        public var confidence: Int
    }

    public struct Failure: Codable, Sendable {
        public var code: String
        public var message: String
    }

    public struct Response: Codable, Sendable {
        public var id: Int
        public var info: PDFInfo?
        public var pages: [PDFPage]?
        public var image: ImageResult?
        public var failure: Failure?

        init(id: Int) { self.id = id }
    }

    static func encodeLine<T: Encodable>(_ value: T) throws -> [UInt8] {
        Array(try JSONEncoder().encode(value)) + [0x0A]
    }

    /// A request line as the worker reads it; nil when it is not one.
    package static func decodeRequest(_ line: [UInt8]) -> Request? {
        try? JSONDecoder().decode(Request.self, from: Data(line))
    }

    /// A response line as the pool reads it; nil when it is not one.
    package static func decodeResponse(_ line: [UInt8]) -> Response? {
        try? JSONDecoder().decode(Response.self, from: Data(line))
    }
}
