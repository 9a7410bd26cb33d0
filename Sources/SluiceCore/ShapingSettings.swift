/// The settings that shape chunks (docs/DESIGN.md §12): how text is extracted and cut. A document whose
/// records were made under other values of the settings its extractor reads is processed again (its
/// unchanged texts' vectors come from the embedding cache), so that one index never mixes two chunkings. The embedder, which shapes the vectors,
/// is guarded on its own (a change is refused without `--reembed`).
public struct ShapingSettings: Sendable, Hashable {
    /// Dotted keys of the pipeline file and their values.
    public var values: [String: String]
    /// The extractors that read each extraction setting, by name, as they declare it
    /// (``Extractor/shapingSettings``); a key none declares shapes every document. Not part of equality:
    /// settings read back from a checkpoint (``init(text:)``) have none.
    public private(set) var readers: [String: Set<String>] = [:]
    /// The extractors of the pipeline, by name (``Extractor/name``): the registry's own list.
    public private(set) var extractorNames: [String] = []

    /// The settings of `configuration` that shape chunks: chunking's, the tokenizer of a remote embedder,
    /// and those each of `extractors` declares it reads (``Extractor/shapingSettings``), so that adding a
    /// format or a setting of one is said once, by its extractor.
    public init(_ configuration: PipelineConfiguration, extractors: [any Extractor]) {
        let chunk = configuration.chunk
        values = [
            "chunk.strategy": chunk.strategy.rawValue,
            "chunk.max_tokens": String(chunk.maxTokens),
            "chunk.overlap_tokens": String(chunk.overlapTokens),
        ]
        // Only when set: a state written before the setting existed (or with it off) keeps its fingerprint.
        if chunk.context != .none { values["chunk.context"] = chunk.context.rawValue }
        if configuration.embed.provider.isRemote {
            values["embed.tokenizer"] = configuration.embed.tokenizer.rawValue
        }
        // Captions shape an image's chunks: turning them on (or raising their revision, the request to
        // re-caption) processes the images again. Their model and prompt do not: a change of either
        // re-captions only on that request. Only when on, so that a state written without them keeps its
        // fingerprint.
        let caption = configuration.extract.images.caption
        if caption.enabled {
            values["extract.images.caption"] = "on"
            values["extract.images.caption.revision"] = String(caption.revision)
            readers["extract.images.caption", default: []].insert("image")
            readers["extract.images.caption.revision", default: []].insert("image")
            // The pictures inside documents: turning them on, or a change of which are sent, processes the
            // documents of the formats that have them again (as does raising the revision).
            if caption.pictures.enabled {
                values["extract.images.caption.pictures"] = "on"
                values["extract.images.caption.pictures.min_side_pixels"] = String(caption.pictures.minSidePixels)
                values["extract.images.caption.pictures.max_per_document"] = String(caption.pictures.maxPerDocument)
                for key in [
                    "extract.images.caption.pictures", "extract.images.caption.pictures.min_side_pixels",
                    "extract.images.caption.pictures.max_per_document", "extract.images.caption.revision",
                ] {
                    readers[key, default: []].formUnion(["pdf", "docx", "pptx"])
                }
            }
        }
        for extractor in extractors {
            extractorNames.append(extractor.name)
            for (key, value) in extractor.shapingSettings {
                values[key] = value
                readers[key, default: []].insert(extractor.name)
            }
        }
    }

    public static func == (lhs: ShapingSettings, rhs: ShapingSettings) -> Bool { lhs.values == rhs.values }

    public func hash(into hasher: inout Hasher) { hasher.combine(values) }

    public init(values: [String: String]) { self.values = values }

    /// `key=value` lines, sorted: what the checkpoint keeps.
    public var text: String { text(read: nil) }

    /// The `key=value` lines (sorted) of the settings that shape a document read by the extractor named
    /// `extractor`: chunking and the tokenizer, which shape every document, and the extraction settings that
    /// extractor reads (``isRead(_:by:)``). A document's fingerprint hashes these, so that a change of a PDF
    /// setting processes the PDFs again and not the text files. nil: every setting.
    public func text(read extractor: String?) -> String {
        values.keys.sorted().filter { key in extractor.map { isRead(key, by: $0) } ?? true }
            .map { "\($0)=\(values[$0]!)" }.joined(separator: "\n")
    }

    /// The lines of ``text(read:)`` that are extraction settings (`extract.…`): what a document's reading
    /// depends on, before its text is cut (the key of a known failure, docs/DESIGN.md §11).
    public func extractionText(read extractor: String?) -> String {
        text(read: extractor).split(separator: "\n").filter { $0.hasPrefix("extract.") }.joined(separator: "\n")
    }

    /// Whether the setting `key` can change the chunks of a document read by the extractor named `extractor`:
    /// the extraction settings are read by the extractors that declare them (``readers``; images, say, are
    /// OCR'd at their own resolution, whatever `extract.ocr.dpi` says); every other key, and any key no
    /// extractor declares, shapes every document.
    public func isRead(_ key: String, by extractor: String) -> Bool {
        readers[key].map { $0.contains(extractor) } ?? true
    }

    /// The extractors whose documents a change from `old` to these settings processes again, by name; nil
    /// when it is every document (a chunking or tokenizer setting changed).
    public func extractorsAffected(since old: ShapingSettings) -> Set<String>? {
        let changed = Set(values.keys).union(old.values.keys).filter { values[$0] != old.values[$0] }
        var names: Set<String> = []
        for key in changed {
            guard let readers = readers[key], readers.count < Set(extractorNames).count else { return nil }
            names.formUnion(readers)
        }
        return names
    }

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
