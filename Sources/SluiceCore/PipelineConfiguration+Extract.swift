import Foundation

extension PipelineConfiguration {
    /// `extract`: reading documents (its ZIP and JSON parts are in `PipelineConfiguration+Documents.swift`,
    /// OCR and PDF in `PipelineConfiguration+Media.swift`).
    public struct Extract: Sendable, Hashable {
        public var maxFileMB: Double = 200
        /// Most megabytes of text one document's extraction may produce, counted as its extractor produces
        /// it (``TextBudget``): past it the document fails with ``SluiceError/Code/textTooLarge``.
        public var maxTextMB: Double = TextBudget.defaultMegabytes
        public var parallelism: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Per-document time limit.
        public var timeoutSeconds: Double = 120
        /// Limits on ZIP-based documents and JSON fields (`PipelineConfiguration+Documents.swift`).
        public var zip = ZIP()
        public var json = JSON()
        // PDF and OCR (see PipelineConfiguration+Media.swift).
        public var ocr = OCR()
        public var pdf = PDF()
        /// Image files beyond OCR: captions by a vision model (`PipelineConfiguration+ImageCaption.swift`).
        public var images = Images()
        /// Run PDF and OCR extraction in supervised worker processes, so that a crash or a hang in C code
        /// fails only its document.
        public var isolate: Bool = true
        /// Most megabytes of PDF and OCR text kept in the state across runs (the extraction cache); 0 turns
        /// the cache off (and empties it at the end of the next run).
        public var cacheMB: Double = 512
        public init() {}

        /// ``maxTextMB`` in bytes.
        public var maxTextBytes: Int { TextBudget.bytes(megabytes: maxTextMB) }
    }
}

extension PipelineConfiguration.Extract {
    /// The largest size in MB a limit may name (a terabyte): beyond it (`.inf`, `1e300`) the size in bytes
    /// has no integer, and "no limit" is not a setting of a limit.
    static let maxMegabytes = 1_048_576.0

    /// Reads `extract.*` over the defaults, with its `zip` (formerly `docx`), `json`, `ocr`, `pdf` and `images`
    /// sections.
    init(section: ConfigurationSection) throws {
        self.init()
        var s = section
        maxFileMB = try s.number("max_file_mb", min: 0.000001, max: Self.maxMegabytes) ?? maxFileMB
        maxTextMB = try s.number("max_text_mb", min: 0.000001, max: Self.maxMegabytes) ?? maxTextMB
        parallelism = try s.int("parallelism", min: 1, max: 1_024) ?? parallelism
        timeoutSeconds = try s.number("timeout_seconds", min: 0.001, max: 86_400) ?? timeoutSeconds
        // `extract.docx` was the ZIP limits' first name (they limit PPTX, XLSX and EPUB too): still read,
        // with a notice naming the new key.
        if let d = try s.section("docx") {
            for key in d.values.keys.sorted() { d.deprecated(key, use: "extract.zip.\(key)") }
            zip = try ZIP(section: d)
        }
        if let z = try s.section("zip") {
            if s.values["docx"] != nil {
                throw SluiceError(
                    .configuration,
                    "extract.docx and extract.zip: set only extract.zip (extract.docx is its deprecated name)"
                )
            }
            zip = try ZIP(section: z)
        }
        if let j = try s.section("json") { json = try JSON(section: j) }
        // PDF and OCR.
        isolate = try s.bool("isolate") ?? isolate
        cacheMB = try s.number("cache_mb", min: 0, max: Self.maxMegabytes) ?? cacheMB
        if let mode = try s.scalarString("ocr", oneOf: OCR.Mode.all.map(\.rawValue)) {
            ocr.mode = .init(mode)
        } else if let o = try s.section("ocr") {
            ocr = try OCR(section: o)
        }
        if let p = try s.section("pdf") { pdf = try PDF(section: p) }
        if let i = try s.section("images") { images = try Images(section: i) }
        try s.finish()
    }
}
