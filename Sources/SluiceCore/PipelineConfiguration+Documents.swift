extension PipelineConfiguration.Extract {
    /// Limits for DOCX (a ZIP of XML parts), checked while inflating.
    public struct DOCX: Sendable, Hashable {
        /// Most megabytes inflated from one document in all.
        public var maxInflatedMB: Double = 100
        /// Most inflated bytes per compressed byte of one part (ordinary parts stay below 30).
        public var maxCompressionRatio: Double = 200
        public init() {}
    }

    /// What the JSON extractor indexes.
    public struct JSON: Sendable, Hashable {
        /// Paths (`$.items[*].body`, `$.**.title`) or key names (`body`) of the values to index; empty
        /// means every string value.
        public var fields: [String] = []
        /// Deeper nesting fails the document.
        public var maxDepth: Int = 64
        public init() {}
    }
}
