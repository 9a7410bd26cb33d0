import Foundation
import SluiceCore

/// The messages between the pipeline and its extract worker processes: one JSON object per line,
/// requests on the worker's standard input, responses on its standard output (JSON escapes line breaks
/// inside strings, so a line is always one message). A worker's first line is its ``Hello``.
package enum ExtractWorkerProtocol {
    /// The version of these messages: bump it with any change to them that the other side would misread.
    package static let version = 2

    /// What a worker and its parent must agree on: Sluice's version, this protocol's, and the output
    /// versions of the extractors a worker runs. A worker that reports another value is from another
    /// build (a `sluice-extract-worker` left beside a newer `sluice`): its answers could be misread, or
    /// differ from what the extraction cache records under this build's extractor identities, so the
    /// pool does not use it (see ``ExtractWorkerPool/Command/fallback``). Library versions are not part
    /// of it: both processes load the same libraries, and reading Tesseract's version would load it.
    package static let compatibility =
        "sluice=\(SluiceVersion.current) protocol=\(version) pdf=\(PDFExtractor.outputVersion) image=\(ImageExtractor.outputVersion)"

    /// A worker's first line, written at start before it reads any request.
    package struct Hello: Codable, Sendable, Equatable {
        /// The worker's ``ExtractWorkerProtocol/compatibility``.
        package var worker: String

        package init(worker: String) { self.worker = worker }
    }

    /// What the worker is started with (as one JSON argument): the extraction settings.
    package struct Options: Codable, Sendable, Hashable {
        package var ocr: PipelineConfiguration.Extract.OCR
        package var pdf: PipelineConfiguration.Extract.PDF
        /// How many PDFs a worker keeps open (``ExtractWorkerPool`` sets its size: the documents in flight).
        package var openDocuments: Int

        package init(
            ocr: PipelineConfiguration.Extract.OCR,
            pdf: PipelineConfiguration.Extract.PDF,
            openDocuments: Int = 1
        ) {
            self.ocr = ocr
            self.pdf = pdf
            self.openDocuments = openDocuments
        }
    }

    package struct Request: Codable, Sendable {
        package enum Kind: String, Codable, Sendable {
            /// Page count, title and author of a PDF, and the text of its first pages: up to `count`, and
            /// no more once `budgetMilliseconds` have passed since the request arrived (at least one).
            case pdfInfo = "pdf-info"
            /// The text of pages `first ..< first + count` of a PDF (OCR'd where the options say).
            case pdfPages = "pdf-pages"
            /// OCR of an image file.
            case image
            /// The pictures of a PDF that captions take (`extract.images.caption.pictures`), decoded by
            /// poppler and written as PNG: those whose shorter side has at least `minSidePixels` pixels, at
            /// most `count` of them, in the document's order.
            case pdfPictures = "pdf-pictures"
        }

        package var id: Int
        package var kind: Kind
        package var path: String
        package var first: Int?
        package var count: Int?
        package var budgetMilliseconds: Int?
        /// The file the parent read (device, inode): the worker refuses another one at `path`.
        package var identity: FileIdentity?
        /// Whether `path` is a symbolic link the scanner followed (else a link there is not opened).
        package var followSymlink: Bool?
        /// Most bytes of text the request's pages may make (the document's `extract.max_text_mb`): past
        /// it the worker stops and answers `text-too-large`, so no answer is larger. Nil: no bound.
        package var maxTextBytes: Int?
        /// The smallest shorter side, in pixels, of a picture a `pdf-pictures` request takes.
        package var minSidePixels: Int?

        /// Opens `path` as the parent read it (see ``DocumentFile``).
        func openFile() throws -> DocumentFile {
            try DocumentFile.open(path, identity: identity, followSymlink: followSymlink ?? false)
        }
    }

    package struct ImageResult: Codable, Sendable {
        package var text: String
        package var confidence: Int
    }

    /// A `pdf-pictures` answer: the pictures taken, with counts of those left out.
    package struct PictureList: Codable, Sendable {
        package var pictures: [Picture]
        /// Pictures under the minimum size, or that poppler cannot draw.
        package var small: Int
        /// Pictures past the request's `count`.
        package var overLimit: Int
    }

    /// A picture of a PDF, as PNG (base64 in the JSON line), with the 1-based page it is on.
    package struct Picture: Codable, Sendable {
        package var png: Data
        package var name: String
        package var page: Int
    }

    package struct Failure: Codable, Sendable {
        package var code: String
        package var message: String
    }

    package struct Response: Codable, Sendable {
        package var id: Int
        package var info: PDFInfo?
        package var pages: [PDFPage]?
        package var image: ImageResult?
        package var pictures: PictureList?
        package var failure: Failure?

        init(id: Int) { self.id = id }
    }

    static func encodeLine<T: Encodable>(_ value: T) throws -> [UInt8] {
        Array(try JSONEncoder().encode(value)) + [0x0A]
    }

    /// A request line as the worker reads it; nil when it is not one.
    package static func decodeRequest(_ line: [UInt8]) -> Request? {
        try? JSONDecoder().decode(Request.self, from: Data(line))
    }

    /// A hello line as the pool reads it; nil when it is not one (a worker from before hellos answers its
    /// first request at once).
    package static func decodeHello(_ line: [UInt8]) -> Hello? {
        try? JSONDecoder().decode(Hello.self, from: Data(line))
    }

    /// A response line as the pool reads it; nil when it is not one.
    package static func decodeResponse(_ line: [UInt8]) -> Response? {
        try? JSONDecoder().decode(Response.self, from: Data(line))
    }
}
