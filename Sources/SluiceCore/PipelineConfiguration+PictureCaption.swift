extension PipelineConfiguration.Extract.Images.Caption {
    /// `extract.images.caption.pictures`: captions for the pictures inside PDFs, DOCX and PPTX, each placed
    /// where the picture sits (after its paragraph in a DOCX, at the end of its page's or slide's text). Off
    /// by default, even with captions on for image files: a document's pictures are often many, and each
    /// is a request.
    ///
    /// Only pictures whose shorter side has at least ``minSidePixels`` pixels are sent: icons, bullets,
    /// rules and spacers are small in pixels whatever their file's size (a 240×160 drawing can be a 500-byte
    /// PNG, a 64×64 icon a 5 KB JPEG), so bytes would not tell them apart; pixels are what the model sees.
    public struct Pictures: Sendable, Hashable {
        public var enabled: Bool = false
        /// A picture whose width or height is under this many pixels is not sent (nor one whose size cannot
        /// be read: a vector drawing, EMF or WMF, which the vision APIs do not take).
        public var minSidePixels: Int = 100
        /// The most pictures of one document sent, in the document's order; the others are not captioned
        /// (the document's metadata says how many were left).
        public var maxPerDocument: Int = 20

        public init() {}
    }
}

extension PipelineConfiguration.Extract.Images.Caption.Pictures {
    /// Reads `extract.images.caption.pictures.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        enabled = try s.bool("enabled") ?? enabled
        minSidePixels = try s.int("min_side_pixels", min: 1, max: 100_000) ?? minSidePixels
        maxPerDocument = try s.int("max_per_document", min: 1, max: 10_000) ?? maxPerDocument
        try s.finish()
    }
}
