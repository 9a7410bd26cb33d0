/// The settings that shape chunks (docs/DESIGN.md §12): how text is extracted and cut. A document whose
/// records were made under other values is processed again (its unchanged texts' vectors come from the
/// embedding cache), so that one index never mixes two chunkings. The embedder, which shapes the vectors,
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

    /// `key=value` lines, sorted: what the checkpoint keeps and the fingerprint hashes.
    public var text: String { values.keys.sorted().map { "\($0)=\(values[$0]!)" }.joined(separator: "\n") }

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
