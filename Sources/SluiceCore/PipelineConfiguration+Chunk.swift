import Foundation

extension PipelineConfiguration {
    /// `chunk`: how extracted text is cut into the pieces that are embedded.
    public struct Chunk: Sendable, Hashable {
        /// How text is split into chunks.
        public enum Strategy: String, Sendable, Hashable, CaseIterable {
            /// Paragraphs, lines, sentences, words, characters; sections are never merged.
            case recursive
            /// Also merges small sections under their common heading; splits preferred at headings, pages,
            /// paragraphs.
            case structured
        }

        /// What the embedder sees of a chunk's document besides the chunk's own text (`ChunkContext`).
        public enum Context: String, Sendable, Hashable, CaseIterable {
            /// The chunk's text alone.
            case none
            /// The document's title, then a blank line, then the chunk's text.
            case title
            /// The title and the heading path the chunk sits under (`Title › Heading › Subheading`), then a
            /// blank line, then the chunk's text.
            case headings
        }

        public var strategy: Strategy = .recursive
        /// `chunk.context`: what is prefixed to a chunk's text in the embedder's input (never to the stored
        /// text, the snippet or the keyword index).
        public var context: Context = .none
        public var maxTokens: Int = 256
        public var overlapTokens: Int = 32
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        public init() {}
    }
}

extension PipelineConfiguration.Chunk {
    /// Reads `chunk.*` over the defaults.
    /// - Throws: also when `overlap_tokens` is not below `max_tokens`.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        strategy = try s.choice("strategy") ?? strategy
        context = try s.choice("context") ?? context
        maxTokens = try s.int("max_tokens", min: 8) ?? maxTokens
        overlapTokens = try s.int("overlap_tokens", min: 0) ?? overlapTokens
        parallelism = try s.int("parallelism", min: 1, max: 1_024) ?? parallelism
        try s.finish()
        if overlapTokens >= maxTokens {
            throw SluiceError(
                .configuration,
                "chunk.overlap_tokens (\(overlapTokens)) must be below chunk.max_tokens (\(maxTokens))"
            )
        }
    }
}
