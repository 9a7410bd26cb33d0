import Foundation
import SluiceCore

/// PDF or image extraction in ``ExtractWorkerPool`` processes: the same code as ``PDFExtractor`` and
/// ``ImageExtractor``, but a crash or a hang in poppler or Tesseract costs only the document.
///
/// A PDF is first opened by one worker (page count, title, author), which also reads its first pages
/// for up to ``defaultFirstRequestBudget``; the remaining pages are then split into ranges that run on all
/// free workers at once, and the parent assembles them in order.
public struct IsolatedExtractor: Extractor {
    /// Which documents the worker processes read: PDFs (page ranges) or images (whole files).
    public enum Kind: Sendable { case pdf, image }

    public let kind: Kind
    public let pool: ExtractWorkerPool
    public let timeout: Duration
    /// How long the worker that opens a PDF reads on before the rest is split (``defaultFirstRequestBudget``).
    public var firstRequestBudget: Duration = Self.defaultFirstRequestBudget
    let assembler: PDFExtractor

    public init(kind: Kind, configuration: PipelineConfiguration.Extract, pool: ExtractWorkerPool) {
        self.kind = kind
        self.pool = pool
        self.timeout = .milliseconds(Int64(configuration.timeoutSeconds * 1000))
        // Only its clean-up and assembly run here; its engines are never used in this process.
        self.assembler = PDFExtractor(pdf: configuration.pdf, engines: OCREnginePool(options: configuration.ocr))
    }

    public var name: String { kind == .pdf ? "pdf" : "image" }

    public func accepts(_ input: ExtractionInput) -> Bool {
        let format = FormatSniffer.sniff(input.bytes)
        return kind == .pdf ? format == .pdf : format.isImage
    }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        let deadline = ContinuousClock.now + timeout
        switch kind {
        case .image:
            let format = FormatSniffer.sniff(input.bytes)
            let response = try pool.run([request(.image, input)], deadline: deadline)[0]
            guard let image = response.image else {
                throw SluiceError(.extractionFailed, "the worker returned no OCR result")
            }
            return try ImageExtractor.assemble(text: image.text, confidence: image.confidence, format: format)
        case .pdf:
            // One worker opens the PDF and reads its first pages, for up to `firstRequestBudget`; the
            // other pages then go, in ranges, to every free worker.
            var open = request(.pdfInfo, input, first: 0, count: Self.maximumRange)
            open.budgetMilliseconds = Int(firstRequestBudget / .milliseconds(1))
            let opened = try pool.run([open], deadline: deadline)[0]
            guard let info = opened.info else {
                throw SluiceError(.extractionFailed, "the worker returned no PDF information")
            }
            let first = opened.pages ?? []
            // Each worker stops its range at the document's bound (its answer is never larger); the
            // document's pages are held to it here, as they come in.
            var budget = input.textBudget()
            for page in first { try budget.charge(page.text) }
            let ranges = Self.pageRanges(pageCount: info.pageCount - first.count, workers: pool.size)
            let requests = ranges.map { request(.pdfPages, input, first: first.count + $0.lowerBound, count: $0.count) }
            let rest = try pool.run(requests, deadline: deadline).flatMap { $0.pages ?? [] }
            for page in rest { try budget.charge(page.text) }
            return try assembler.assemble(info: info, pages: first + rest)
        }
    }

    /// A request for the document's file, with the identity the pipeline read it with: the worker opens
    /// it again by path and refuses another file there.
    func request(
        _ kind: ExtractWorkerProtocol.Request.Kind,
        _ input: ExtractionInput,
        first: Int? = nil,
        count: Int? = nil
    ) -> ExtractWorkerProtocol.Request {
        ExtractWorkerProtocol.Request(
            id: pool.nextRequestID(),
            kind: kind,
            path: input.fileURL.path,
            first: first,
            count: count,
            identity: input.fileIdentity,
            followSymlink: input.followsSymlink,
            maxTextBytes: input.maxTextBytes
        )
    }

    /// The smallest and largest range of pages one request asks for (see ``pageRanges(pageCount:workers:)``).
    static let minimumRange = 4
    static let maximumRange = 32

    /// How long the worker that opens a PDF goes on reading its first pages (up to `maximumRange`)
    /// before the rest is split among the workers. Every worker that takes a range opens the document
    /// again, so a short PDF is best read whole by one; but a long scan (a second of OCR per page) must
    /// not run on one worker alone. Measured with `sluice-bench extract` on two cores (bulk corpus,
    /// against pdftotext): splitting after the first page, 4% slower; with a budget of 25, 100 or
    /// 1,000 ms, 7–16% faster, with no clear difference among the three.
    public static let defaultFirstRequestBudget: Duration = .milliseconds(100)

    /// Splits a document's pages into ranges: about four per worker so that uneven pages (OCR) balance,
    /// at least 4 pages each (each worker that takes a range opens the document: fonts, cross-references;
    /// scanned pages, at a second of OCR each, still spread over the workers)
    /// and at most 32 so that each response stays small.
    static func pageRanges(pageCount: Int, workers: Int) -> [Range<Int>] {
        guard pageCount > 0 else { return [] }
        let perRange = min(maximumRange, max(minimumRange, (pageCount + 4 * workers - 1) / (4 * workers)))
        return stride(from: 0, to: pageCount, by: perRange).map { $0..<min(pageCount, $0 + perRange) }
    }
}
