import Foundation

/// What an extractor is given: the document's key, where it lives, and its bytes (already read and hashed).
public struct ExtractionInput: Sendable {
    public var key: String
    public var fileURL: URL
    public var bytes: [UInt8]
    /// The file the bytes were read from, for extractors that open it again (PDF): another file at
    /// `fileURL` by then is refused (see ``DocumentFile``). Nil: not checked.
    public var fileIdentity: FileIdentity?
    /// Whether `fileURL` is a symbolic link that may be followed (`source.follow_symlinks`).
    public var followsSymlink: Bool
    /// Most UTF-8 bytes of text the extraction may produce (`extract.max_text_mb`, or four times the file's
    /// size where that is larger: ``TextBudget/init(setting:fileSize:)``, which the extract stage applies):
    /// an extractor charges what it produces to ``textBudget()`` as it goes, and stops with
    /// ``SluiceError/Code/textTooLarge`` once past it.
    public var maxTextBytes: Int
    /// The character set the bytes came declared in by their transport (the `charset=` of an HTTP
    /// `Content-Type`); nil when nothing outside the bytes says. Extractors of text formats decode with it
    /// where the format's own rules let a transport decide (HTML: after a byte-order mark, before `<meta>`).
    public var declaredCharset: String?

    public init(
        key: String,
        fileURL: URL,
        bytes: [UInt8],
        fileIdentity: FileIdentity? = nil,
        followsSymlink: Bool = false,
        maxTextBytes: Int = TextBudget.bytes(megabytes: TextBudget.defaultMegabytes),
        declaredCharset: String? = nil
    ) {
        self.key = key
        self.fileURL = fileURL
        self.bytes = bytes
        self.fileIdentity = fileIdentity
        self.followsSymlink = followsSymlink
        self.maxTextBytes = maxTextBytes
        self.declaredCharset = declaredCharset
    }

    /// A budget of ``maxTextBytes`` for this document's text, nothing spent.
    public func textBudget() -> TextBudget { TextBudget(limit: maxTextBytes) }

    /// Opens `fileURL` again as the bytes were read (see ``DocumentFile``).
    public func openFile() throws -> DocumentFile {
        try DocumentFile.open(fileURL.path, identity: fileIdentity, followSymlink: followsSymlink)
    }
}

/// Turns one document's bytes into text.
///
/// - Important: ``extract(_:)`` may block for seconds (C libraries, large files). The pipeline calls it
///   on a ``BlockingExecutor`` thread, never on Swift's cooperative pool, unless the extractor says it
///   ``extractsInline``.
public protocol Extractor: Sendable {
    /// A short name for stats and error messages (`text`, `pdf`, …).
    var name: String { get }
    /// Whether this extractor handles the document, judged by its content (magic bytes) first and its
    /// file name as a hint.
    func accepts(_ input: ExtractionInput) -> Bool
    /// Extracts the text.
    /// - Throws: ``SluiceError`` with a per-document reason (``SluiceError/Code/invalidEncoding``, …).
    func extract(_ input: ExtractionInput) throws -> ExtractedText
    /// What decides this extractor's output besides the bytes, when its extractions are worth keeping in
    /// the state across runs (they cost far more than reading the file: PDF, OCR); nil (the default) for
    /// extractors that are cheaper to run again than to look up.
    var cacheIdentity: ExtractorIdentity? { get }
    /// Whether ``extract(_:)`` is quick Swift code, linear in the bytes, that never blocks (no C library
    /// that can stall, no I/O): the pipeline then runs it on the calling task's thread, as the chunker
    /// runs, because handing a few kilobytes of plain text to an executor thread and back costs more
    /// CPU than extracting them. False (the default) for everything else.
    var extractsInline: Bool { get }
    /// The pipeline settings that can change the text this extractor produces, as dotted keys of the
    /// pipeline file and their values (`extract.pdf.join_hyphens`: `true`). They join the settings that
    /// shape chunks (``ShapingSettings``): a change of one processes again the documents this extractor
    /// read, and no other. Empty (the default) for an extractor no setting changes.
    var shapingSettings: [String: String] { get }
}

extension Extractor {
    public var cacheIdentity: ExtractorIdentity? { nil }
    public var extractsInline: Bool { false }
    public var shapingSettings: [String: String] { [:] }
}
