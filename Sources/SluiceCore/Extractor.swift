import Foundation

/// What an extractor is given: the document's key, where it lives, and its bytes (already read and hashed).
public struct ExtractionInput: Sendable {
    public var key: String
    public var fileURL: URL
    public var bytes: [UInt8]

    public init(key: String, fileURL: URL, bytes: [UInt8]) {
        self.key = key
        self.fileURL = fileURL
        self.bytes = bytes
    }
}

/// Turns one document's bytes into text.
///
/// - Important: ``extract(_:)`` may block for seconds (C libraries, large files). The pipeline always
///   calls it on a ``BlockingExecutor`` thread, never on Swift's cooperative pool.
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
}

extension Extractor {
    public var cacheIdentity: ExtractorIdentity? { nil }
}
