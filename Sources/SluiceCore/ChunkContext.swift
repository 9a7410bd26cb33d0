/// What the embedder sees of a chunk (`chunk.context`): the chunk's text, prefixed with its document's title
/// and the heading path it sits under (`Title › Heading › Subheading`, a blank line, then the text), so that a
/// passage of page 40 of a manual embeds with the context that makes it findable. The stored text and the
/// snippet keep the chunk's own text (the local store's keyword index holds the title and heading path
/// whatever this setting says: `KeywordIndex+Fields.swift`).
///
/// The prefix has a budget in the embedder's tokens: at most ``reservedTokens``, and never more than the room
/// the chunk leaves in the embedder's window (`maxInputTokens`), so the input always fits and the chunk's own
/// text is never cut for it. The chunker leaves that room (``chunkBudget(maxTokens:maxInputTokens:)``). A
/// prefix over its budget loses its outer headings first (the title and the innermost heading say the
/// most), then the title, then words from its end.
package struct ChunkContext: Sendable {
    /// The most tokens a prefix takes (its separators included).
    package static let reservedTokens = 32
    /// Between the parts of the path.
    package static let separator = " › "
    /// Between the prefix and the chunk's text.
    package static let prefixEnd = "\n\n"

    package var setting: PipelineConfiguration.Chunk.Context
    package var counter: any TokenCounter
    /// The embedder's window (``EmbedderLimits/maxTokensPerInput``).
    package var maxInputTokens: Int

    package init(_ setting: PipelineConfiguration.Chunk.Context, counter: any TokenCounter, maxInputTokens: Int) {
        self.setting = setting
        self.counter = counter
        self.maxInputTokens = maxInputTokens
    }

    /// The most tokens a chunk may have: `maxTokens`, and with a context, room for the prefix in the window.
    package static func chunkBudget(
        maxTokens: Int,
        maxInputTokens: Int,
        context: PipelineConfiguration.Chunk.Context
    ) -> Int {
        guard context != .none else { return min(maxTokens, maxInputTokens) }
        // A window too small to spare the reserve keeps at least half of it for the chunk.
        return min(maxTokens, max(maxInputTokens - reservedTokens, maxInputTokens / 2))
    }

    /// The parts of the prefix, outermost first: the title (if the setting names it and the document has one)
    /// and, for `headings`, the heading path; empty and repeated parts left out (a Markdown title is often
    /// its first heading too).
    package func parts(title: String?, headings: [String]) -> [String] {
        var parts: [String] = []
        var candidates: [String] = []
        switch setting {
        case .none: return []
        case .title: candidates = [title ?? ""]
        case .headings: candidates = [title ?? ""] + headings
        }
        for candidate in candidates {
            // Every word is at least one token: words past the most a prefix takes could never be sent.
            let part = Chunk.normalize(candidate).split(separator: " ").prefix(Self.reservedTokens)
                .joined(separator: " ")
            if !part.isEmpty, part != parts.last { parts.append(part) }
        }
        return parts
    }

    /// The prefix for a chunk of `chunkTokens` tokens under `title` and `headings` (the separator to the
    /// chunk's text included), and its size in tokens; `("", 0)` when there is none or no room for one.
    package func prefix(title: String?, headings: [String], chunkTokens: Int) -> (text: String, tokens: Int) {
        var parts = parts(title: title, headings: headings)
        guard !parts.isEmpty else { return ("", 0) }
        let budget = min(Self.reservedTokens, maxInputTokens - chunkTokens)
        guard budget > 0 else { return ("", 0) }
        func made(_ parts: [String]) -> (text: String, tokens: Int) {
            let text = parts.joined(separator: Self.separator) + Self.prefixEnd
            return (text, counter.count(text))
        }
        var candidate = made(parts)
        // Outer headings first (keeping the first part, the title or the outermost heading, and the last,
        // the innermost), then the first part.
        while candidate.tokens > budget, parts.count > 1 {
            parts.remove(at: parts.count > 2 ? 1 : 0)
            candidate = made(parts)
        }
        // One part left, still too long: words from its end.
        var words = parts[0].split(separator: " ")
        while candidate.tokens > budget, words.count > 1 {
            words.removeLast()
            candidate = made([words.joined(separator: " ")])
        }
        return candidate.tokens > budget ? ("", 0) : candidate
    }
}
