import Foundation
import SluiceCore

/// A record's typed metadata: the chunk's position, the document's extracted facts and its file's
/// (docs/CONFIGURATION.md, "Record metadata", lists every key).
enum RecordMetadata {
    /// Keys whose values are whole numbers wherever they come from.
    static let integerKeys: Set<String> = [
        "page", "line", "pages", "rows", "slides", "chapters", "ocr_pages", "ocr_confidence",
        "ocr_skipped_pages", "ocr_empty_pages", "pictures_captioned", "pictures_skipped", "pictures_failed",
    ]

    /// What a document gives each of its records: built once per document (its front matter parsed once), not
    /// per chunk.
    struct DocumentPart {
        /// The document's facts, its front matter's and its file's, which the chunk's own keys win over.
        var leading: [String: MetadataValue]
        /// What wins over the chunk's keys.
        var contentHash: MetadataValue?
        var folders: MetadataValue?
    }

    static func documentPart(_ document: DocumentWork) -> DocumentPart {
        var metadata: [String: MetadataValue] = [:]
        // Document facts (format, title, author, OCR confidence, …) first; the chunk's own keys win.
        for (key, text) in document.documentMetadata where !extractorNotes.contains(key) {
            metadata[key] = typed(key, text)
        }
        if document.frontMatter, let json = document.documentMetadata[frontMatterKey] {
            metadata.merge(frontMatter(json)) { _, front in front }
        }
        // The pipeline's values and the path's captures, size and mtime.
        metadata.merge(document.fileMetadata) { _, file in file }
        let folders = folders(of: document.file.key)
        return DocumentPart(
            leading: metadata,
            contentHash: document.contentHash.map { .string($0.hex) },
            folders: folders.isEmpty ? nil : .strings(folders)
        )
    }

    /// A record's metadata: its document's `part` (``documentPart(_:)`` of `document`) and the chunk's own.
    static func build(chunk: Chunk, document: DocumentWork, part: DocumentPart) -> [String: MetadataValue] {
        var metadata = part.leading
        for (key, text) in chunk.metadata { metadata[key] = typed(key, text) }
        if case .string(let lines) = metadata["lines"],
            let first = lines.split(separator: "-").first.flatMap({ Int($0) })
        {
            metadata["line"] = .int(first)
        }
        metadata["offset"] = .int(chunk.startOffset)
        metadata["tokens"] = .int(chunk.tokenCount)
        if let page = chunk.page { metadata["page"] = .int(page) }
        if !chunk.headingPath.isEmpty { metadata["headings"] = .strings(chunk.headingPath) }
        if let hash = part.contentHash { metadata["content_hash"] = hash }
        if let folders = part.folders { metadata["folders"] = folders }
        if let access = document.metadataRules?.access, access.isEnabled {
            // Readers as a list, whichever rule gave them (a path capture is one text); none under
            // `access.default: deny`, so that only an unrestricted identity reads the record.
            metadata[access.field] = access.readers(of: metadata).map(MetadataValue.strings)
        }
        return metadata
    }

    /// `a/b/c.pdf` → `a/`, `a/b/`: what a `document_key ^= "a/b/"` filter matches in stores without prefixes.
    static func folders(of key: String) -> [String] {
        var folders: [String] = []
        var prefix = ""
        for part in key.split(separator: "/", omittingEmptySubsequences: false).dropLast() {
            prefix += part + "/"
            folders.append(prefix)
        }
        return folders
    }

    /// The extractors' key for Markdown front matter: a JSON object.
    static let frontMatterKey = "front_matter"
    /// What the text extractor says of a front matter it could not take whole (``FrontMatterReaders``).
    static let frontMatterDroppedKey = "front_matter_dropped"
    static let frontMatterProblemKey = "front_matter_problem"
    /// The extractors' keys that are notes to the pipeline, not metadata of the records.
    static let extractorNotes: Set<String> = [frontMatterKey, frontMatterDroppedKey, frontMatterProblemKey]

    static func frontMatter(_ json: String) -> [String: MetadataValue] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] else {
            return [:]
        }
        return object.compactMapValues(MetadataValue.init(json:))
    }

    static func typed(_ key: String, _ text: String) -> MetadataValue {
        if integerKeys.contains(key), let number = Int(text) { return .int(number) }
        return .string(text)
    }
}
