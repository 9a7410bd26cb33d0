import SluiceCore

/// Chooses the extractor for a document: the first that accepts it, in order (specific formats first,
/// text last). Formats are told apart by content (``FormatSniffer``), the file name being only a hint.
public struct ExtractorRegistry: Sendable {
    public var extractors: [any Extractor]

    public init(extractors: [any Extractor]) { self.extractors = extractors }

    /// The extractors Sluice ships, for a configuration.
    ///
    /// - Parameter workers: Worker processes for PDF and image extraction (``ExtractWorkerPool``); with
    ///   nil (or `extract.isolate: false`) they run in this process.
    public static func standard(
        configuration: PipelineConfiguration.Extract,
        workers: ExtractWorkerPool? = nil
    ) -> ExtractorRegistry {
        // PDF and images first (unambiguous magic bytes), then the Office, OpenDocument and EPUB containers,
        // RTF, HTML, JSON, CSV (ExtractorRegistry+Documents.swift), then text.
        var extractors: [any Extractor] = []
        // PDF and images: in worker processes when isolation is on, else in process.
        if configuration.isolate, let workers {
            extractors += [
                IsolatedExtractor(kind: .pdf, configuration: configuration, pool: workers),
                IsolatedExtractor(kind: .image, configuration: configuration, pool: workers),
            ]
        } else {
            let engines = OCREnginePool(options: configuration.ocr)
            extractors += [PDFExtractor(pdf: configuration.pdf, engines: engines), ImageExtractor(engines: engines)]
        }
        extractors += documentExtractors(configuration)
        extractors.append(TextExtractor())
        return ExtractorRegistry(extractors: extractors)
    }

    public func extractor(for input: ExtractionInput) -> (any Extractor)? {
        extractors.first { $0.accepts(input) }
    }
}
