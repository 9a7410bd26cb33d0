import Foundation
import SluiceTesting
import Testing

/// The `sluice` commands the README, USAGE.md and SERVE.md show run as shown (issue 30), against a copy
/// of `samples/` with the local store, so that the docs stay true: each exits 0, and each search finds
/// something. The filters of USAGE.md's "Filters" block run too, and match. A command that cannot run here
/// is in ``skipped`` with the reason; an example the test does not recognise fails it.
@Suite struct DocsExamplesCLITests {
    /// A `sluice` command line of a document's code block.
    struct Example: CustomStringConvertible {
        var file: String
        var line: Int
        var words: [String]
        var description: String { "\(file):\(line): sluice \(words.joined(separator: " "))" }
    }

    /// Commands that do not run here, by their first words, and why.
    static let skipped: [String: String] = [
        "serve": "a server that runs until stopped: ServeCLITests start it and call every endpoint",
        "ask": "needs a chat model: AskCLITests run it against a stand-in server",
        "sink drop": "removes the store: SinkCLITests run it",
        "embed": "reads its input from a pipe: EmbedCommandCLITests run it",
        "eval": "needs the judged queries of samples/ indexed with MiniLM (or a chat model): EvalCLITests run it",
    ]

    /// The documents whose examples run.
    static let documents = ["README.md", "docs/USAGE.md", "docs/SERVE.md"]

    /// Every `sluice …` line of the documents' code blocks (synopses with `[OPTION]` left aside).
    static func examples() throws -> [Example] {
        var examples: [Example] = []
        for document in documents {
            let text = try String(
                contentsOf: Corpus.repositoryRoot.appendingPathComponent(document),
                encoding: .utf8
            )
            var inBlock = false
            for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                if raw.hasPrefix("```") {
                    inBlock.toggle()
                    continue
                }
                guard inBlock else { continue }
                var line = raw.trimmingCharacters(in: .whitespaces)
                for prefix in ["$ ", ".build/release/", ".build/debug/", "$"] where line.hasPrefix(prefix) {
                    line.removeFirst(prefix.count)
                }
                guard line.hasPrefix("sluice "), let words = ShellWords.split(line), words.count > 1 else { continue }
                // A synopsis (`sluice run [PIPELINE] [--prune]`) is not an example.
                if words.contains(where: { $0.hasPrefix("[") }) { continue }
                examples.append(Example(file: document, line: index + 1, words: Array(words.dropFirst())))
            }
        }
        return examples
    }

    /// The filters of USAGE.md's "Filters" block (the one after "## Filters").
    static func usageFilters() throws -> [String] {
        let text = try String(
            contentsOf: Corpus.repositoryRoot.appendingPathComponent("docs/USAGE.md"),
            encoding: .utf8
        )
        let section = try #require(text.range(of: "\n## Filters"))
        let rest = text[section.upperBound...]
        let open = try #require(rest.range(of: "```\n"))
        let close = try #require(rest[open.upperBound...].range(of: "```"))
        return rest[open.upperBound..<close.lowerBound].split(separator: "\n").map(String.init)
    }

    static func reasonSkipped(_ words: [String]) -> String? {
        skipped.first { key, _ in words.starts(with: key.split(separator: " ").map(String.init)) }?.value
    }

    @Test("the docs' sluice commands and USAGE.md's filters run against samples/ as shown")
    func theDocsExamplesRun() async throws {
        let examples = try Self.examples()
        #expect(examples.count >= 15, "\(examples)")
        let ws = try Workspace("docs-examples")
        defer { ws.cleanUp() }
        // The samples every example needs (the PDFs for `page`, Markdown for `format = markdown`, …).
        for folder in ["markdown", "text", "json", "csv", "html"] {
            try FileManager.default.copyItem(
                at: Corpus.repositoryRoot.appendingPathComponent("samples").appendingPathComponent(folder),
                to: ws.corpus.appendingPathComponent(folder)
            )
        }
        try FileManager.default.createDirectory(
            at: ws.corpus.appendingPathComponent("pdf"),
            withIntermediateDirectories: true
        )
        try FileManager.default.copyItem(
            at: Corpus.repositoryRoot.appendingPathComponent("samples/pdf/xz-utils-faq.pdf"),
            to: ws.corpus.appendingPathComponent("pdf/xz-utils-faq.pdf")
        )
        // The default pipeline's settings, with the hash embedder (the examples are about commands, not
        // about the model) and the workspace's paths.
        let pipeline = ws.file("docs.yaml")
        try """
        source: { path: ./corpus, include: ["**/*"], exclude: [] }
        extract: { isolate: true }
        chunk: { strategy: structured, max_tokens: 256, overlap_tokens: 32 }
        embed: { provider: hash, dimensions: 384 }
        sink: { kind: local, path: ./index }
        state: ./state
        """.write(to: pipeline, atomically: true, encoding: .utf8)
        let first = try await ws.sluice(["run", pipeline.path], timeout: .seconds(240))
        try #require(first.exitCode == 0, "\(first)")

        // A pipeline file an example names is the repository's (or one the docs make with `cp`).
        let copied = try Set(
            Self.documents.flatMap { document in
                try String(contentsOf: Corpus.repositoryRoot.appendingPathComponent(document), encoding: .utf8)
                    .split(separator: "\n").compactMap { line -> String? in
                        let words = ShellWords.split(line.trimmingCharacters(in: .whitespaces)) ?? []
                        return words.first == "cp" && words.count >= 3 ? words[2] : nil
                    }
            }
        )
        for example in examples {
            for file in example.words where file.hasPrefix("Pipelines/") && file.hasSuffix(".yaml") {
                #expect(
                    copied.contains(file)
                        || FileManager.default.fileExists(
                            atPath: Corpus.repositoryRoot.appendingPathComponent(file).path
                        ),
                    "\(example): \(file) does not exist"
                )
            }
        }

        var ran = 0
        for example in examples {
            if Self.reasonSkipped(example.words) != nil { continue }
            // The examples' pipeline files (and none: the default one) are the workspace's.
            var words = example.words.filter { !$0.hasSuffix(".yaml") } + [pipeline.path]
            if words.first == "export" { words += ["-o", ws.file("export.jsonl").path] }
            let result = try await ws.sluice(words, timeout: .seconds(240))
            #expect(result.exitCode == 0, "\(example)\n\(result)")
            if words.first == "search" {
                #expect(!result.stdout.isEmpty && !result.stdout.contains("no results"), "\(example)\n\(result)")
            }
            ran += 1
        }
        #expect(ran >= 10, "only \(ran) examples ran")

        let filters = try Self.usageFilters()
        #expect(filters.count >= 4, "\(filters)")
        for filter in filters {
            let result = try await ws.sluice(["search", "the", "-k", "3", "--filter", filter, pipeline.path])
            #expect(result.exitCode == 0, "filter \(filter)\n\(result)")
            #expect(!result.stdout.contains("no results"), "the USAGE.md filter \(filter) matches nothing\n\(result)")
        }
    }

    @Test func theSplitterReadsQuotes() {
        #expect(
            ShellWords.split(#"sluice search "a b" --filter 'x = "y"' -k 5   # comment"#)
                == ["sluice", "search", "a b", "--filter", #"x = "y""#, "-k", "5"]
        )
        #expect(ShellWords.split(#"sluice serve p.yaml &"#) == ["sluice", "serve", "p.yaml", "&"])
        #expect(ShellWords.split(#"sluice search "open"#) == nil)
    }
}

/// Splits a shell command line into words as `sh` would for the docs' examples: single and double quotes
/// (backslash escapes inside double quotes), a `#` comment after white space. nil for an unclosed quote.
enum ShellWords {
    static func split(_ line: String) -> [String]? {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\" && open == "\"" {
                    escaped = true
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "'", "\"":
                quote = character
                inWord = true
            case "\\":
                escaped = true
                inWord = true
            case " ", "\t":
                if inWord { words.append(current) }
                current = ""
                inWord = false
            case "#" where !inWord:
                return words
            default:
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { return nil }
        if inWord { words.append(current) }
        return words
    }
}
