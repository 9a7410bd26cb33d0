import SluiceCore

extension ExtractorRegistry {
    /// The extractors for structured documents (DOCX, PPTX, XLSX, EPUB, HTML, JSON, CSV), in the order they
    /// are tried. The ZIP-based formats first (a ZIP signature and the part that names the format), then HTML
    /// and JSON (sniffed), then CSV (by extension).
    static func documentExtractors(_ configuration: PipelineConfiguration.Extract) -> [any Extractor] {
        [
            DOCXExtractor(
                maxInflatedBytes: Int(configuration.docx.maxInflatedMB * 1_048_576),
                maxCompressionRatio: configuration.docx.maxCompressionRatio
            ),
            PPTXExtractor(
                maxInflatedBytes: Int(configuration.docx.maxInflatedMB * 1_048_576),
                maxCompressionRatio: configuration.docx.maxCompressionRatio
            ),
            XLSXExtractor(
                maxInflatedBytes: Int(configuration.docx.maxInflatedMB * 1_048_576),
                maxCompressionRatio: configuration.docx.maxCompressionRatio
            ),
            EPUBExtractor(
                maxInflatedBytes: Int(configuration.docx.maxInflatedMB * 1_048_576),
                maxCompressionRatio: configuration.docx.maxCompressionRatio
            ),
            HTMLExtractor(),
            JSONExtractor(fields: configuration.json.fields, maxDepth: configuration.json.maxDepth),
            CSVExtractor(),
        ]
    }
}
