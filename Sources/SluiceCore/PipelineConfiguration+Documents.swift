extension PipelineConfiguration.Extract {
    /// `extract.zip`: limits on the ZIP container of DOCX, PPTX, XLSX and EPUB documents (and of any
    /// format in a ZIP), checked while inflating. Named after the container rather than a format: the
    /// limits are the container's (how much it inflates, and how fast), whatever the parts inside mean.
    public struct ZIP: Sendable, Hashable {
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

extension PipelineConfiguration.Extract {
    /// The limits of `extract.zip`, under their former name.
    @available(*, deprecated, renamed: "ZIP")
    public typealias DOCX = ZIP

    /// ``zip``, under its former name.
    @available(*, deprecated, renamed: "zip")
    public var docx: ZIP {
        get { zip }
        set { zip = newValue }
    }
}

extension PipelineConfiguration.Extract.ZIP {
    /// Reads `extract.zip.*` (or the deprecated `extract.docx.*`) over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var d = section
        maxInflatedMB =
            try d.number("max_inflated_mb", min: 0.001, max: PipelineConfiguration.Extract.maxMegabytes)
            ?? maxInflatedMB
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
