extension RunStats {
    /// Adds a document's OCR counts to the run's: its metadata's `ocr_pages`, `ocr_skipped_pages` and
    /// `ocr_empty_pages` (the PDF extractor's; absent keys count zero). Called for the documents the run
    /// extracts, not for those whose text came from an identical file or the extraction cache.
    /// - Parameter metadata: an extracted document's metadata.
    public mutating func addOCRCounts(of metadata: [String: String]) {
        func add(_ key: String, to counter: inout Int?) {
            guard let value = metadata[key].flatMap({ Int($0) }), value > 0 else { return }
            counter = (counter ?? 0) + value
        }
        add("ocr_pages", to: &ocrPages)
        add("ocr_skipped_pages", to: &ocrSkippedPages)
        add("ocr_empty_pages", to: &ocrEmptyPages)
    }

    /// `OCR: 12 pages read, 1 read as nothing, 4 skipped (no image to read)`, each part left out when zero;
    /// nil when the run OCR'd and skipped no page.
    public var ocrSummary: String? {
        var parts: [String] = []
        if let pages = ocrPages, pages > 0 { parts.append("\(pages) page\(pages == 1 ? "" : "s") read") }
        if let empty = ocrEmptyPages, empty > 0 { parts.append("\(empty) read as nothing") }
        if let skipped = ocrSkippedPages, skipped > 0 { parts.append("\(skipped) skipped (no image to read)") }
        return parts.isEmpty ? nil : "OCR: " + parts.joined(separator: ", ")
    }
}
