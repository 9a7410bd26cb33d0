import SluiceCore

/// With access control on, a Markdown document whose front matter may name its readers but could not be
/// read whole fails (`malformed`, a known failure until the file changes) instead of being indexed with the
/// readers of `access.default` — under `allow`, everyone's (session 47's campaign: `access: [board, 2024]`,
/// a list holding a number, and a front matter whose YAML does not parse both made board minutes readable
/// by every key).
///
/// Not refused: a document whose readers come from a rule that wins over front matter (a path capture,
/// S3 tags, `source.metadata`), and any document when front matter is not read (`source.front_matter:
/// false`) or access control is off.
enum FrontMatterReaders {
    /// Why `document` may not be indexed, from its extractor's notes (`metadata`); nil when it may.
    static func refusal(of document: DocumentWork, metadata: [String: String]) -> SluiceError? {
        guard let access = document.metadataRules?.access, access.isEnabled, document.frontMatter else { return nil }
        // Readers from a rule that wins over front matter: what the front matter says of them is not used.
        if let readers = document.fileMetadata[access.field], !readers.isEmpty { return nil }
        if let dropped = metadata[RecordMetadata.frontMatterDroppedKey]?.split(separator: "\n"),
            dropped.contains(where: { $0 == access.field })
        {
            return SluiceError(
                .malformed,
                "the front matter's \(access.field) is not a text or a list of texts (quote numbers, yes/no and dates): the document is not indexed rather than given the default readers"
            )
        }
        if let problem = metadata[RecordMetadata.frontMatterProblemKey] {
            return SluiceError(
                .malformed,
                "\(problem): it may name the document's readers (\(access.field)), so the document is not indexed rather than given the default readers"
            )
        }
        return nil
    }
}
