/// The most text one document's extraction may produce (`extract.max_text_mb`), spent as the extractor
/// produces it.
///
/// The limits on a file's size and on inflation (`extract.max_file_mb`, `extract.zip.*`) count the bytes
/// read, not the text made of them, and a reader multiplies: one shared string of an XLSX named by a
/// thousand cells, a header repeated before every value (XLSX, CSV), a JSON key in the path of every value
/// under it, a slide or chapter listed again and again. So every extractor charges the text it produces
/// here, a row, a page or a part at a time, before it produces more, and stops at the first charge past
/// the limit: memory stays near the limit whatever the file says. The extract stage checks the whole text
/// once more (``check(_:)``), for extractors that do not charge as they go.
///
/// The bound is on what a file multiplies into, not on its size (`extract.max_file_mb` bounds that): a
/// document may always produce ``fileSizeMultiple`` times its own bytes (``init(setting:fileSize:)``), so a
/// large plain-text, CSV or JSON Lines file is read whole while a small file that names the same text a
/// million times stops at the setting.
public struct TextBudget: Sendable, Hashable {
    /// Most UTF-8 bytes of text.
    public let limit: Int
    /// UTF-8 bytes charged so far.
    public private(set) var spent = 0

    /// How many times its own size a file may always produce: a CSV or spreadsheet row's header names repeat
    /// before each value (two to three times the row's bytes in ordinary tables), a JSON value carries its
    /// key path, and a compressed Office part inflates; a file past this multiplies by reference.
    public static let fileSizeMultiple = 4

    /// `extract.max_text_mb`'s default: 32 MB, some eight million tokens, over 30,000 chunks of 256 tokens
    /// and more than seven times the King James Bible. A document past it is, in practice, generated or
    /// hostile; a corpus of large data dumps (JSON Lines, CSV) raises it.
    public static let defaultMegabytes: Double = 32

    public init(limit: Int) { self.limit = max(0, limit) }

    /// The bound of one document: `setting` (`extract.max_text_mb` in bytes), or ``fileSizeMultiple`` times
    /// the file's size when that is larger.
    public init(setting: Int, fileSize: Int) {
        let (multiple, overflow) = max(0, fileSize).multipliedReportingOverflow(by: Self.fileSizeMultiple)
        self.init(limit: max(setting, overflow ? Int.max : multiple))
    }

    /// `megabytes` (MiB, as every `_mb` setting) in bytes.
    public static func bytes(megabytes: Double) -> Int {
        let bytes = megabytes * 1_048_576
        return bytes >= Double(Int.max) ? Int.max : Int(bytes)
    }

    /// Charges `count` bytes of text.
    /// - Throws: ``SluiceError/Code/textTooLarge`` when the text charged passes the limit.
    public mutating func charge(_ count: Int) throws {
        let (sum, overflow) = spent.addingReportingOverflow(count)
        spent = overflow ? Int.max : sum
        if spent > limit { throw exceeded() }
    }

    /// Charges a piece of text by its UTF-8 size.
    public mutating func charge(_ text: some StringProtocol) throws { try charge(text.utf8.count) }

    /// Charges a section: its text, heading path and metadata.
    public mutating func charge(_ section: TextSection) throws {
        try charge(section.text.utf8.count + Self.labelBytes(of: section))
    }

    /// Charges what a section carries besides its text: its heading path and metadata, which every chunk of
    /// it repeats (a huge heading over many sections multiplies as a huge header does). For extractors that
    /// charged the text already, a line or a paragraph at a time.
    public mutating func charge(labelsOf section: TextSection) throws { try charge(Self.labelBytes(of: section)) }

    private static func labelBytes(of section: TextSection) -> Int {
        section.headingPath.reduce(0) { $0 + $1.utf8.count }
            + section.metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }

    /// Checks a whole extraction against the limit (its sections' text, heading paths and metadata).
    /// - Throws: ``SluiceError/Code/textTooLarge`` when it is over.
    public func check(_ text: ExtractedText) throws {
        var budget = TextBudget(limit: limit)
        for section in text.sections { try budget.charge(section) }
    }

    /// Checks a document's chunks against the limit: their text, and the heading path and metadata each
    /// carries into its stored record, the document's own (`title`, `author`, …) included. A section's heading
    /// path counts once in the extraction but once per chunk here: a heading of a megabyte over a section of
    /// a thousand chunks stores a gigabyte.
    /// - Throws: ``SluiceError/Code/textTooLarge`` when it is over.
    public func check(_ chunks: [Chunk], documentMetadata: [String: String]) throws {
        let perRecord = documentMetadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        var total = 0
        for chunk in chunks {
            total +=
                chunk.text.utf8.count + perRecord + chunk.headingPath.reduce(0) { $0 + $1.utf8.count }
                + chunk.metadata.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
            if total > limit {
                throw SluiceError(
                    .textTooLarge,
                    "the document's \(chunks.count) chunks, with the heading path and metadata each repeats, pass \(boundName): a huge heading or title over many chunks multiplies. Raise extract.max_text_mb if the document is that large"
                )
            }
        }
    }

    /// The error once past the limit: what was produced and the setting that bounds it.
    func exceeded() -> SluiceError {
        SluiceError(
            .textTooLarge,
            "the document's text passes \(boundName): extraction stopped after \(Self.size(spent)); a file that repeats text by reference (a shared string named by many cells, a header before every value) multiplies what it holds. Raise extract.max_text_mb if the document is that large"
        )
    }

    /// The bound as the errors name it: its size and where it comes from.
    private var boundName: String {
        "its bound of \(Self.size(limit)) (extract.max_text_mb, or \(Self.fileSizeMultiple) times the file's size where that is larger)"
    }

    /// `12 KB` under a megabyte, else `1.5 MB` (MiB, as the setting).
    private static func size(_ bytes: Int) -> String {
        guard bytes >= 1_048_576 else { return "\(bytes / 1024) KB" }
        let tenths = Int((Double(bytes) / 1_048_576 * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) MB"
    }
}
