import Foundation
import SluiceCore

/// Plain text and Markdown (UTF-8, or the character set the transport declared:
/// ``ExtractionInput/declaredCharset``). Markdown's ATX headings (`# …`) become sections with heading paths,
/// so that chunks carry the headings they sit under.
///
/// Rejects, with a precise reason: empty files, binary data (NUL bytes or mostly control characters),
/// and invalid UTF-8 (the offset of the first bad byte).
public struct TextExtractor: Extractor {
    public init() {}

    public var name: String { "text" }

    static let markdownExtensions: Set<String> = ["md", "markdown", "mdown", "mkd"]

    /// Extensions that always mean text: content sniffing for other formats leaves them alone.
    static let knownTextExtensions: Set<String> = markdownExtensions.union(sourceExtensions).union([
        "txt", "text", "log", "rst", "me", "1st",
    ])

    /// Source code read as text; the metadata names the language by its extension.
    static let sourceExtensions: Set<String> = [
        "swift", "c", "h", "cc", "cpp", "cxx", "hpp", "m", "mm", "rs", "go", "py", "rb", "pl", "pm", "php", "java",
        "kt", "kts", "scala", "cs", "fs", "js", "mjs", "cjs", "ts", "tsx", "jsx", "sh", "bash", "zsh", "fish", "lua",
        "r", "jl", "hs", "ml", "ex", "exs", "erl", "clj", "el", "lisp", "scm", "sql", "yaml", "yml", "toml", "ini",
        "cfg", "conf", "xml", "css", "scss", "proto", "cmake", "mk", "dockerfile", "tex", "rst", "vim", "zig", "dart",
    ]

    /// Text is the fallback format: every document that no other extractor claims is tried as text.
    public func accepts(_ input: ExtractionInput) -> Bool { true }

    /// Validation, a binary check and one string: linear, in Swift (Markdown front matter through Yams'
    /// libyaml, in memory), and cheaper than two thread hand-offs for a file of a few kilobytes.
    public var extractsInline: Bool { true }

    public func extract(_ input: ExtractionInput) throws -> ExtractedText {
        guard !input.bytes.isEmpty else { throw SluiceError(.emptyDocument, "zero-byte file: nothing to index") }
        let format = FormatSniffer.sniff(input.bytes)
        guard format == .text else {
            throw SluiceError(
                .unsupportedFormat,
                "the content is a \(FormatSniffer.describe(format)), not text, and no extractor for it is enabled"
            )
        }
        // A character set the transport declared (an HTTP `Content-Type`'s) is decoded into UTF-8 first.
        let (bytes, decodedFrom) = Charset.utf8(input.bytes, declared: input.declaredCharset)
        // The text is at most the bytes: a file past the bound is refused before it is decoded.
        var budget = input.textBudget()
        try budget.charge(bytes.count)
        try Self.rejectBinary(bytes)
        // CR LF joined on the bytes, then one validating decode; an error's offset is the original bytes'.
        var text = try Self.decodeUTF8(
            memchr(bytes, 0x0D, bytes.count) == nil ? bytes : Self.joiningCRLF(bytes),
            reportingErrorsIn: bytes
        )
        if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        guard text.contains(where: { !$0.isWhitespace }) else {
            throw SluiceError(.emptyDocument, "the file holds only white space")
        }
        let ext = input.fileURL.pathExtension.lowercased()
        let isMarkdown = Self.markdownExtensions.contains(ext)
        var metadata = ["format": isMarkdown ? "markdown" : "text"]
        if let decodedFrom { metadata["charset"] = decodedFrom }
        if isMarkdown, let frontMatter = MarkdownFrontMatter(text) {
            text = frontMatter.body
            metadata["front_matter"] = frontMatter.json
            if !frontMatter.dropped.isEmpty {
                metadata["front_matter_dropped"] = frontMatter.dropped.joined(separator: "\n")
            }
            if case .string(let title) = frontMatter.values["title"], !title.isEmpty { metadata["title"] = title }
            guard text.contains(where: { !$0.isWhitespace }) else {
                throw SluiceError(.emptyDocument, "the file holds only front matter")
            }
        } else if isMarkdown, let problem = MarkdownFrontMatter.problem(in: text) {
            metadata["front_matter_problem"] = problem  // the text kept as it is; access control may refuse it
        }
        let sections = isMarkdown ? Self.markdownSections(text) : [TextSection(text: text)]
        // Every section repeats the headings above it: `# <a megabyte>` over many `##` sections multiplies.
        for section in sections where !section.headingPath.isEmpty { try budget.charge(labelsOf: section) }
        if Self.sourceExtensions.contains(ext) {
            var source = ["format": "source", "language": ext]
            source["charset"] = decodedFrom
            return ExtractedText(sections: sections, metadata: source)
        }
        return ExtractedText(sections: sections, metadata: metadata)
    }

    /// NUL bytes, or more than 10% control characters in the first 64 KiB, mean binary data.
    /// Control characters are the bytes below 0x20 other than tab, line feed, form feed and carriage return,
    /// and 0x7F.
    static func rejectBinary(_ bytes: [UInt8]) throws {
        let sampleCount = min(bytes.count, 65_536)
        let (nul, controls) = bytes.withUnsafeBufferPointer { buffer -> (Int?, Int) in
            guard let base = buffer.baseAddress, sampleCount > 0 else { return (nil, 0) }
            if let hit = memchr(base, 0, sampleCount) {
                return (UnsafeRawPointer(base).distance(to: UnsafeRawPointer(hit)), 0)
            }
            var controls = 0
            for offset in 0..<sampleCount {
                let byte = base[offset]
                // Bit n of the mask: byte n below 0x20 is a control (all but 0x09, 0x0A, 0x0C and 0x0D).
                let control = byte < 0x20 ? (UInt32(0xFFFF_C9FF) &>> UInt32(byte)) & 1 : byte == 0x7F ? 1 : 0
                controls &+= Int(control)
            }
            return (nil, controls)
        }
        if let nul {
            throw SluiceError(.binaryContent, "binary data, not text (NUL byte at offset \(nul))")
        }
        if controls * 10 > sampleCount {
            throw SluiceError(
                .binaryContent,
                "binary data, not text (\(controls) control bytes in the first \(sampleCount))"
            )
        }
    }

    /// Strict UTF-8 decoding that names the offset of the first invalid byte.
    static func decodeUTF8(_ bytes: [UInt8], reportingErrorsIn original: [UInt8]? = nil) throws -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        let bytes = original ?? bytes
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded): offset += encoded.count
            case .emptyInput: return String(decoding: bytes, as: UTF8.self)
            case .error(let length):
                throw SluiceError(
                    .invalidEncoding,
                    "invalid UTF-8 at byte offset \(offset) (\(length) bad byte\(length == 1 ? "" : "s")); convert the file to UTF-8"
                )
            }
        }
    }

    /// `bytes` with every CR LF pair turned into LF, on the bytes (UTF-8 never has 0x0D or 0x0A inside a
    /// multi-byte sequence, so valid input stays valid). Foundation's `replacingOccurrences(of: "\r\n",
    /// with: "\n")`, used before, went through UTF-16 at about 20 MB/s; it also left a CR LF alone when a
    /// combining mark followed it (its search matches whole characters), which this joins like any other.
    static func joiningCRLF(_ bytes: [UInt8]) -> [UInt8] {
        var joined: [UInt8] = []
        joined.reserveCapacity(bytes.count)
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start < buffer.count, let hit = memchr(base + start, 0x0D, buffer.count - start) {
                let cr = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                let isPair = cr + 1 < buffer.count && buffer[cr + 1] == 0x0A
                joined.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start..<(isPair ? cr : cr + 1)]))
                start = cr + 1
            }
            joined.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[start...]))
        }
        return joined
    }

    /// Splits Markdown at ATX headings outside fenced code blocks; each section carries its heading path
    /// and starts with its heading line.
    static func markdownSections(_ text: String) -> [TextSection] {
        var sections: [TextSection] = []
        var path: [(level: Int, title: String)] = []
        var current: [Substring] = []
        var currentPath: [String] = []
        var inFence = false
        func flush() {
            let body = current.joined(separator: "\n")
            if body.contains(where: { !$0.isWhitespace }) {
                sections.append(TextSection(text: body, headingPath: currentPath))
            }
            current.removeAll()
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("```") || trimmed.hasPrefix("~~~") { inFence.toggle() }
            if !inFence, line.hasPrefix("#") {
                let level = line.prefix { $0 == "#" }.count
                let rest = line.dropFirst(level)
                if level <= 6, rest.isEmpty || rest.first == " " {
                    flush()
                    let title = rest.trimmingCharacters(in: .whitespaces).trimmingCharacters(
                        in: CharacterSet(charactersIn: "#")
                    ).trimmingCharacters(in: .whitespaces)
                    while let last = path.last, last.level >= level { path.removeLast() }
                    path.append((level, title))
                    currentPath = path.map(\.title)
                }
            }
            current.append(line)
        }
        flush()
        return sections
    }
}
