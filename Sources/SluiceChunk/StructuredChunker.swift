import SluiceCore

/// A structure-aware chunker: it prefers to split at headings, then pages, then paragraphs, and gives
/// every chunk the nearest heading path that encloses all of its text.
///
/// ``RecursiveChunker`` never lets a chunk cross a section, so a document with many short sections
/// (a heading and two lines, as DOCX and HTML manuals have) becomes many tiny chunks. This chunker
/// first merges runs of adjacent small sections that
/// - fit in ``RecursiveChunker/maxTokens`` together,
/// - sit on the same page and carry the same position metadata, and
/// - share at least their outermost heading (or have no heading at all),
///
/// joining them with a blank line (a paragraph break) under their common heading path: `A > B` and
/// `A > C` merge under `A`; `A` and `D` never merge. Larger sections are left alone, and
/// ``RecursiveChunker`` then splits each (merged) section at paragraphs, lines, sentences and words.
/// A chunk's ``Chunk/startOffset`` is relative to its merged section.
public struct StructuredChunker: Chunker {
    public let base: RecursiveChunker

    /// - Parameters mirror ``RecursiveChunker/init(maxTokens:overlapTokens:counter:)``.
    public init(maxTokens: Int, overlapTokens: Int, counter: any TokenCounter) {
        base = RecursiveChunker(maxTokens: maxTokens, overlapTokens: overlapTokens, counter: counter)
    }

    public func chunk(_ text: ExtractedText) -> [Chunk] {
        base.chunk(ExtractedText(sections: merged(text.sections), metadata: text.metadata))
    }

    /// The sections after merging runs of small neighbours.
    func merged(_ sections: [TextSection]) -> [TextSection] {
        var out: [TextSection] = []
        var group: TextSection?
        var groupTokens = 0
        for section in sections {
            let tokens = base.counter.count(section.text)
            if var current = group, current.page == section.page, current.metadata == section.metadata,
                groupTokens + tokens <= base.maxTokens
            {
                let common = Self.commonPrefix(current.headingPath, section.headingPath)
                if !common.isEmpty || (current.headingPath.isEmpty && section.headingPath.isEmpty) {
                    current.text += "\n\n" + section.text
                    current.headingPath = common
                    group = current
                    groupTokens += tokens
                    continue
                }
            }
            if let current = group { out.append(current) }
            group = section
            groupTokens = tokens
        }
        if let current = group { out.append(current) }
        return out
    }

    static func commonPrefix(_ a: [String], _ b: [String]) -> [String] {
        Array(zip(a, b).prefix { $0 == $1 }.map(\.0))
    }
}
