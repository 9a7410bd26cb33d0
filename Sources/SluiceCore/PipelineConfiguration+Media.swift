extension PipelineConfiguration.Extract {
    /// OCR of images and of PDF pages without a usable text layer (`extract.ocr`).
    public struct OCR: Sendable, Hashable, Codable {
        /// When PDF pages are OCR'd. Open-ended: new modes are static members.
        public struct Mode: Sendable, Hashable, Codable, CustomStringConvertible {
            public var rawValue: String
            public init(_ rawValue: String) { self.rawValue = rawValue }
            public var description: String { rawValue }

            /// Pages whose text layer holds fewer than ``OCR/minTextCharacters`` characters.
            public static let auto = Mode("auto")
            /// Every page, ignoring the text layer.
            public static let always = Mode("always")
            /// No page (images are still OCR'd: there is no other way to read them).
            public static let never = Mode("never")
            public static let all: [Mode] = [.auto, .always, .never]
        }

        public var mode: Mode = .auto
        /// Tesseract language codes, joined with `+` (each needs `tesseract-ocr-<code>` installed).
        public var languages: [String] = ["eng"]
        /// Tesseract's page segmentation mode, as the CLI's `--psm` (3: fully automatic).
        public var pageSegmentationMode: Int = 3
        /// Resolution PDF pages are rendered at for OCR.
        public var dpi: Int = 300
        /// In `auto` mode, a page whose text layer has fewer non-white-space characters than this is OCR'd.
        public var minTextCharacters: Int = 16
        public init() {}
    }

    /// PDF text clean-up and encrypted documents (`extract.pdf`).
    public struct PDF: Sendable, Hashable, Codable {
        /// Drop lines repeated at the top or bottom of most pages (running headers, footers, page numbers).
        public var stripHeadersFooters: Bool = false
        /// Join words hyphenated at line ends ("extrac-\ntion" → "extraction").
        public var joinHyphens: Bool = true
        /// The environment variable holding the password of encrypted PDFs (never the password itself).
        public var passwordEnvironmentVariable: String? = nil
        public init() {}
    }
}

extension PipelineConfiguration.Extract.OCR {
    /// Reads the mapping form of `extract.ocr` over the defaults (the shorthand `ocr: auto` is read by
    /// ``PipelineConfiguration/Extract``).
    init(section: ConfigurationSection) throws {
        self.init()
        var o = section
        mode = try o.string("mode", oneOf: Mode.all.map(\.rawValue)).map { .init($0) } ?? mode
        languages = try o.strings("languages") ?? languages
        pageSegmentationMode = try o.int("psm", min: 0, max: 13) ?? pageSegmentationMode
        dpi = try o.int("dpi", min: 72, max: 1200) ?? dpi
        minTextCharacters = try o.int("min_text_chars", min: 0) ?? minTextCharacters
        try o.finish()
    }
}

extension PipelineConfiguration.Extract.PDF {
    /// Reads `extract.pdf.*` over the defaults.
    init(section: ConfigurationSection) throws {
        self.init()
        var p = section
        stripHeadersFooters = try p.bool("strip_headers") ?? stripHeadersFooters
        joinHyphens = try p.bool("join_hyphens") ?? joinHyphens
        passwordEnvironmentVariable = try p.string("password_env") ?? passwordEnvironmentVariable
        try p.finish()
    }
}
