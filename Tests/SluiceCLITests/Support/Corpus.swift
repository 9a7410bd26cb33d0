import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The shared SplitMix64 generator, so corpora and kill delays are the same on every run.
typealias SeededGenerator = SplitMix64

extension SplitMix64 {
    /// A number in `range`, by plain modulo (stable across standard library versions).
    mutating func int(in range: ClosedRange<Int>) -> Int {
        range.lowerBound + Int(next() % UInt64(range.count))
    }
}

/// Test corpora cut from the repository's real prose (samples/text/*.txt and samples/markdown/*.md).
enum Corpus {
    /// The repository root, from this file's path (Tests/SluiceCLITests/Support/Corpus.swift).
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    struct Prose: Sendable {
        var name: String
        var lines: [String]
    }

    /// The sample documents, as lines, by kind.
    static let prose: (text: [Prose], markdown: [Prose]) = {
        func load(_ folder: String, _ ext: String) -> [Prose] {
            let url = repositoryRoot.appendingPathComponent("samples").appendingPathComponent(folder)
            let names = ((try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []).filter {
                $0.hasSuffix(ext)
            }.sorted()
            return names.compactMap { name in
                guard let text = try? String(contentsOf: url.appendingPathComponent(name), encoding: .utf8) else {
                    return nil
                }
                return Prose(name: name, lines: text.components(separatedBy: "\n"))
            }
        }
        return (load("text", ".txt"), load("markdown", ".md"))
    }()

    static let folders = ["notes", "manuals/unix", "manuals/tools", "faq", "release-notes"]

    /// Writes `count` documents of `minBytes`…`maxBytes` (cut at line boundaries from the samples) into
    /// `directory`, spread over a few subfolders; every third is Markdown. Deterministic for a seed.
    /// - Returns: the document keys (paths relative to `directory`), sorted.
    @discardableResult
    static func write(
        count: Int,
        into directory: URL,
        seed: UInt64,
        minBytes: Int = 2_000,
        maxBytes: Int = 20_000,
        prefix: String = "doc"
    ) throws -> [String] {
        let prose = self.prose
        try #require(
            !prose.text.isEmpty && !prose.markdown.isEmpty,
            "no sample prose under \(repositoryRoot.path)/samples"
        )
        var rng = SeededGenerator(seed: seed)
        var keys: [String] = []
        for index in 0..<count {
            let markdown = index % 3 == 0
            let key =
                "\(folders[index % folders.count])/\(prefix)\(String(format: "%04d", index)).\(markdown ? "md" : "txt")"
            let text = document(index: index, markdown: markdown, bytes: rng.int(in: minBytes...maxBytes), rng: &rng)
            try write(text, to: directory.appendingPathComponent(key))
            keys.append(key)
        }
        return keys.sorted()
    }

    /// One document of about `bytes` bytes: a title line, then consecutive lines of one sample from a
    /// random line on (wrapping into the next sample when one ends).
    static func document(index: Int, markdown: Bool, bytes: Int, rng: inout SeededGenerator) -> String {
        let sources = markdown ? prose.markdown : prose.text
        var sourceIndex = rng.int(in: 0...(sources.count - 1))
        var line = rng.int(in: 0...(sources[sourceIndex].lines.count - 1))
        var out = markdown ? "# Document \(index)\n\n" : "Document \(index)\n\n"
        while out.utf8.count < bytes {
            let lines = sources[sourceIndex].lines
            if line >= lines.count {
                sourceIndex = (sourceIndex + 1) % sources.count
                line = 0
                out += "\n"
                continue
            }
            out += lines[line] + "\n"
            line += 1
        }
        return out
    }

    static func write(_ text: String, to url: URL) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
    }
}
