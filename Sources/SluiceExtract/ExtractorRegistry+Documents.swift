import SluiceCore

extension ExtractorRegistry {
    /// The extractors for structured documents (DOCX, PPTX, XLSX, ODT, ODS, ODP, EPUB, RTF, HTML, JSON, CSV),
    /// in the order they are tried. The ZIP-based formats first (a ZIP signature and the part, or for
    /// OpenDocument the `mimetype` entry, that names the format), then RTF (its `{\rtf` signature), HTML and
    /// JSON (sniffed), then CSV (by extension).
    static func documentExtractors(_ configuration: PipelineConfiguration.Extract) -> [any Extractor] {
        // `extract.zip.*` limits every ZIP-based format's inflation.
        let inflated = Int(configuration.zip.maxInflatedMB * 1_048_576)
        let ratio = configuration.zip.maxCompressionRatio
        return [
            DOCXExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            PPTXExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            XLSXExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            ODTExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            ODSExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            ODPExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            EPUBExtractor(maxInflatedBytes: inflated, maxCompressionRatio: ratio),
            RTFExtractor(),
            HTMLExtractor(),
            JSONExtractor(fields: configuration.json.fields, maxDepth: configuration.json.maxDepth),
            CSVExtractor(),
        ]
    }
}
