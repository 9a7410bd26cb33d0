import SluiceCore

/// Chooses the extractor for a document: the first that accepts it, in order (specific formats first,
/// text last).
public struct ExtractorRegistry: Sendable {
    public var extractors: [any Extractor]

    public init(extractors: [any Extractor]) { self.extractors = extractors }

    /// The extractors Sluice ships, for a configuration.
    public static func standard(configuration: PipelineConfiguration.Extract) -> ExtractorRegistry {
        ExtractorRegistry(extractors: documentExtractors(configuration) + [TextExtractor()])
    }

    public func extractor(for input: ExtractionInput) -> (any Extractor)? {
        extractors.first { $0.accepts(input) }
    }
}
