/// A document's format as its content says (magic bytes), the file name only breaking ties.
public struct DocumentFormat: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }

    public static let empty = DocumentFormat("empty")
    public static let pdf = DocumentFormat("pdf")
    public static let png = DocumentFormat("png")
    public static let jpeg = DocumentFormat("jpeg")
    public static let tiff = DocumentFormat("tiff")
    public static let bmp = DocumentFormat("bmp")
    public static let gif = DocumentFormat("gif")
    public static let webp = DocumentFormat("webp")
    public static let zip = DocumentFormat("zip")
    /// Rich Text Format: `{\rtf` at the start.
    public static let rtf = DocumentFormat("rtf")
    /// Other known binary containers that Sluice does not extract (gzip, ELF, …): named for the reason.
    public static let otherBinary = DocumentFormat("binary")
    /// Anything else: the text extractor decides (and rejects binary data and invalid UTF-8 precisely).
    public static let text = DocumentFormat("text")

    /// The raster formats OCR reads (through leptonica).
    public static let images: Set<DocumentFormat> = [.png, .jpeg, .tiff, .bmp, .gif, .webp]

    public var isImage: Bool { Self.images.contains(self) }
}

/// Detects a document's format from its first bytes.
///
/// The extension never overrides the content: a PNG named `.pdf` is a PNG, random bytes named `.txt` are
/// handed to the text extractor, which rejects them as binary. Extractors call ``sniff(_:)`` in their
/// `accepts`.
public enum FormatSniffer {
    /// The format of `bytes` by their magic numbers.
    public static func sniff(_ bytes: [UInt8]) -> DocumentFormat {
        bytes.withUnsafeBufferPointer { sniff(prefix: UnsafeRawBufferPointer($0)) }
    }

    static func sniff(prefix b: UnsafeRawBufferPointer) -> DocumentFormat {
        if b.isEmpty { return .empty }
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            guard b.count >= offset + magic.count else { return false }
            for (i, byte) in magic.enumerated() where b[offset + i] != byte { return false }
            return true
        }
        // PDF: "%PDF-" at the start. (Readers tolerate junk before it, but a text file that quotes a PDF
        // header in its first KiB must stay text.)
        if starts(Magic.pdf) { return .pdf }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return .tiff }
        if starts(Magic.gif87a) || starts(Magic.gif89a) { return .gif }
        if starts(Magic.riff) && starts(Magic.webp, at: 8) { return .webp }
        if starts(Magic.bmp) && b.count >= 26 && bmpHeaderLooksValid(b) { return .bmp }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return .zip }
        if starts(Magic.rtf) { return .rtf }
        if starts([0x1F, 0x8B]) || starts([0x7F, 0x45, 0x4C, 0x46]) || starts([0x28, 0xB5, 0x2F, 0xFD])
            || starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00])
            || starts(Magic.bzip2) && b.count > 3 && b[3] >= 0x31 && b[3] <= 0x39
        {
            return .otherBinary
        }
        return .text
    }

    /// The text magic numbers, made once (every extractor's `accepts` sniffs every document).
    private enum Magic {
        static let pdf = Array("%PDF-".utf8)
        static let gif87a = Array("GIF87a".utf8)
        static let gif89a = Array("GIF89a".utf8)
        static let riff = Array("RIFF".utf8)
        static let webp = Array("WEBP".utf8)
        static let bmp = Array("BM".utf8)
        static let bzip2 = Array("BZh".utf8)
        static let rtf = Array("{\\rtf".utf8)
    }

    /// The OpenDocument format (`odt`, `ods`, `odp`) of a ZIP archive whose first entry, `mimetype`, names
    /// one; nil for anything else. The entry is stored at the start, so the first bytes tell.
    package static func openDocumentFormat(_ bytes: [UInt8]) -> String? {
        OpenDocumentPackage.kind(of: bytes)?.format
    }

    /// A human name for failure messages ("PNG image", "ZIP archive", …).
    public static func describe(_ format: DocumentFormat) -> String {
        switch format {
        case .pdf: "PDF document"
        case .zip: "ZIP archive"
        case .rtf: "RTF document"
        case .otherBinary: "compressed or executable binary data"
        case .empty: "empty file"
        case .text: "text"
        default: "\(format.rawValue.uppercased()) image"
        }
    }

    /// "BM" starts many text files; a real BMP has a DIB header size of 12, 40, 52, 56, 64, 108 or 124.
    private static func bmpHeaderLooksValid(_ b: UnsafeRawBufferPointer) -> Bool {
        let dib = Int(b[14]) | Int(b[15]) << 8 | Int(b[16]) << 16 | Int(b[17]) << 24
        return [12, 40, 52, 56, 64, 108, 124].contains(dib)
    }
}
