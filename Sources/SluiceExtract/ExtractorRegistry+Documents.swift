import SluiceCore

extension ExtractorRegistry {
    /// The extractors for structured documents (DOCX, HTML, JSON, CSV), in the order they are tried.
    /// DOCX first (a ZIP signature), then HTML and JSON (sniffed), then CSV (by extension).
    static func documentExtractors(_ configuration: PipelineConfiguration.Extract) -> [any Extractor] {
        [
            DOCXExtractor(
                maxInflatedBytes: Int(configuration.docx.maxInflatedMB * 1_048_576),
                maxCompressionRatio: configuration.docx.maxCompressionRatio
            ),
            HTMLExtractor(),
            JSONExtractor(fields: configuration.json.fields, maxDepth: configuration.json.maxDepth),
            CSVExtractor(),
        ]
    }
}
