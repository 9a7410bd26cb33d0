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

extension PipelineConfiguration.Extract.DOCX {
    /// Reads `extract.docx.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var d = section
        maxInflatedMB = try d.number("max_inflated_mb", min: 0.001) ?? maxInflatedMB
        maxCompressionRatio = try d.number("max_compression_ratio", min: 1) ?? maxCompressionRatio
        try d.finish()
    }
}

extension PipelineConfiguration.Extract.JSON {
    /// Reads `extract.json.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var j = section
        fields = try j.strings("fields") ?? fields
        maxDepth = try j.int("max_depth", min: 1) ?? maxDepth
        try j.finish()
    }
}
