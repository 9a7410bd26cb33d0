import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice embed`: JSON lines `{"text": …}` in, `{"embedding": […]}` out, in the same order.
struct EmbedCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "embed",
        abstract: "Embed texts without a pipeline: JSON lines {\"text\": …} in, {\"embedding\": […]} out, same order."
    )

    @Option(help: "The embedder: minilm (all-MiniLM-L6-v2, local) or hash.")
    var provider = "minilm"

    @Option(help: "The minilm embedder's arithmetic: fp32 (exact) or int8 (faster, its own identity).")
    var precision = "fp32"

    @Option(help: ArgumentHelp("JSON lines to read, or - for standard input.", valueName: "file"))
    var input = "-"

    @Option(help: ArgumentHelp("Where to write the vectors, or - for standard output.", valueName: "file"))
    var output = "-"

    @Option(help: "Texts per embedding call.")
    var batch = 256

    func run() async throws {
        try await withExitMapping {
            guard batch > 0 else { throw SluiceError(.usage, "--batch must be positive") }
            var settings = PipelineConfiguration.Embed()
            guard let provider = PipelineConfiguration.Embed.Provider.named(provider) else {
                throw SluiceError(.configuration, "embed.provider: '\(provider)' is not supported")
            }
            settings.provider = provider
            guard let precision = PipelineConfiguration.Embed.Precision(rawValue: precision) else {
                throw SluiceError(.configuration, "embed.precision: '\(precision)' is not fp32 or int8")
            }
            settings.precision = precision
            let embedder = try PipelineComponents.makeEmbedder(settings)
            let reader = try LineReader(path: input)
            let writer = try OutputFile.open(output, inputs: input == "-" ? [] : [URL(fileURLWithPath: input)])
            var texts: [String] = []
            var lineNumber = 0
            func flush() async throws {
                guard !texts.isEmpty else { return }
                let vectors = try await embedder.embed(texts)
                var out = ""
                for vector in vectors {
                    out += "{\"embedding\":["
                    out += vector.map { "\($0)" }.joined(separator: ",")
                    out += "]}\n"
                }
                try writer.write(contentsOf: Data(out.utf8))
                texts.removeAll(keepingCapacity: true)
            }
            while let line = try reader.next() {
                lineNumber += 1
                if line.allSatisfy(\.isWhitespace) { continue }
                texts.append(try Self.text(of: line, number: lineNumber, source: input))
                if texts.count >= batch { try await flush() }
            }
            try await flush()
        }
    }

    /// The `text` of one input line.
    /// - Throws: ``SluiceError/Code/usage`` naming the line when it is not `{"text": "…"}`.
    static func text(of line: Substring, number: Int, source: String) throws -> String {
        let name = source == "-" ? "standard input" : source
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw SluiceError(.usage, "\(name) line \(number): not a JSON object (expected {\"text\": \"…\"})")
        }
        guard let text = object["text"] as? String else {
            throw SluiceError(.usage, "\(name) line \(number): no string field \"text\"")
        }
        return text
    }
}

/// Reads a file or standard input line by line (LF or CRLF), in blocks.
private final class LineReader {
    private let handle: FileHandle
    private var buffer = Data()
    private var atEnd = false

    init(path: String) throws {
        if path == "-" {
            handle = .standardInput
        } else {
            guard let file = FileHandle(forReadingAtPath: path) else {
                throw SluiceError(.usage, "cannot read \(path)")
            }
            handle = file
        }
    }

    func next() throws -> Substring? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                var line = buffer[buffer.startIndex..<newline]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                let text = String(decoding: line, as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return text[...]
            }
            if atEnd {
                guard !buffer.isEmpty else { return nil }
                let text = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return text[...]
            }
            let block = try handle.read(upToCount: 1 << 16) ?? Data()
            if block.isEmpty { atEnd = true } else { buffer.append(block) }
        }
    }
}
