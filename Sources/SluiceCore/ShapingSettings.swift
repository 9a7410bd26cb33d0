/// The settings that shape chunks (docs/DESIGN.md §12): how text is extracted and cut. A document whose
/// records were made under other values of the settings its extractor reads is processed again (its
/// unchanged texts' vectors come from the embedding cache), so that one index never mixes two chunkings. The embedder, which shapes the vectors,
/// is guarded on its own (a change is refused without `--reembed`).
public struct ShapingSettings: Sendable, Hashable {
    /// Dotted keys of the pipeline file and their values.
    public var values: [String: String]

    public init(_ configuration: PipelineConfiguration) {
        let chunk = configuration.chunk
        let extract = configuration.extract
        values = [
            "chunk.strategy": chunk.strategy.rawValue,
            "chunk.max_tokens": String(chunk.maxTokens),
            "chunk.overlap_tokens": String(chunk.overlapTokens),
            "extract.json.fields": extract.json.fields.joined(separator: ","),
            "extract.ocr.mode": extract.ocr.mode.description,
            "extract.ocr.languages": extract.ocr.languages.joined(separator: "+"),
            "extract.ocr.psm": String(extract.ocr.pageSegmentationMode),
            "extract.ocr.dpi": String(extract.ocr.dpi),
            "extract.ocr.min_text_chars": String(extract.ocr.minTextCharacters),
            "extract.pdf.strip_headers": String(extract.pdf.stripHeadersFooters),
            "extract.pdf.join_hyphens": String(extract.pdf.joinHyphens),
        ]
        if configuration.embed.provider.isRemote {
            values["embed.tokenizer"] = configuration.embed.tokenizer.rawValue
        }
    }

    public init(values: [String: String]) { self.values = values }

    /// `key=value` lines, sorted: what the checkpoint keeps.
    public var text: String { text(read: nil) }

    /// The `key=value` lines (sorted) of the settings that shape a document read by the extractor named
    /// `extractor`: chunking and the tokenizer, which shape every document, and the extraction settings that
    /// extractor reads (``isRead(_:by:)``). A document's fingerprint hashes these, so that a change of a PDF
    /// setting processes the PDFs again and not the text files. nil: every setting.
    public func text(read extractor: String?) -> String {
        values.keys.sorted().filter { key in extractor.map { Self.isRead(key, by: $0) } ?? true }
            .map { "\($0)=\(values[$0]!)" }.joined(separator: "\n")
    }

    /// The lines of ``text(read:)`` that are extraction settings (`extract.…`): what a document's reading
    /// depends on, before its text is cut (the key of a known failure, docs/DESIGN.md §11).
    public func extractionText(read extractor: String?) -> String {
        text(read: extractor).split(separator: "\n").filter { $0.hasPrefix("extract.") }.joined(separator: "\n")
    }

    /// Whether the setting `key` can change the chunks of a document read by the extractor named `extractor`.
    /// The extraction settings are read as the extractors' cache identities say (`PDFExtractor.identity`,
    /// `ImageExtractor.identity`): images are OCR'd at their own resolution, whatever `extract.ocr.mode`
    /// says; every other key, and any key not known here, shapes every document.
    public static func isRead(_ key: String, by extractor: String) -> Bool {
        if key.hasPrefix("extract.pdf.") { return extractor == "pdf" }
        if key == "extract.ocr.languages" || key == "extract.ocr.psm" {
            return extractor == "pdf" || extractor == "image"
        }
        if key.hasPrefix("extract.ocr.") { return extractor == "pdf" }
        if key.hasPrefix("extract.json.") { return extractor == "json" }
        return true
    }

    /// The extractors whose documents a change from `old` to these settings processes again, by name; nil
    /// when it is every document (a chunking or tokenizer setting changed).
    public func extractorsAffected(since old: ShapingSettings) -> Set<String>? {
        let changed = Set(values.keys).union(old.values.keys).filter { values[$0] != old.values[$0] }
        var names: Set<String> = []
        for key in changed {
            let readers = Self.extractorNames.filter { Self.isRead(key, by: $0) }
            guard readers.count < Self.extractorNames.count else { return nil }
            names.formUnion(readers)
        }
        return names
    }

    /// The extractors Sluice ships, by name (`Extractor.name`).
    public static let extractorNames = ["pdf", "image", "docx", "pptx", "xlsx", "epub", "html", "json", "csv", "text"]

    public init(text: String) {
        var values: [String: String] = [:]
        for line in text.split(separator: "\n") {
            guard let equals = line.firstIndex(of: "=") else { continue }
            values[String(line[..<equals])] = String(line[line.index(after: equals)...])
        }
        self.values = values
    }

    /// `chunk.max_tokens 256 → 128`, one per key that differs from `old`.
    public func changes(from old: ShapingSettings) -> [String] {
        Set(values.keys).union(old.values.keys).sorted().compactMap { key in
            let before = old.values[key] ?? "(unset)"
            let now = values[key] ?? "(unset)"
            return before == now ? nil : "\(key) \(before) → \(now)"
        }
    }
}
