import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice eval`: retrieval quality on a judged query set, per search mode; or `--generate N` writes a set.
struct EvalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "eval",
        abstract: "Score search on a judged query set: recall@5, recall@k, MRR and nDCG@k per mode and kind of query.",
        discussion: """
            The query file (--queries, else eval.queries) has one JSON object per line: id, query, kind, and \
            relevant, the documents that answer it ({"key": "a.pdf", "page": 2, "contains": "a phrase"}). \
            Each query is searched as `sluice search` does (copies collapsed) once per --mode. \
            --generate N --out FILE writes such a file from the index instead, with a question per sampled \
            chunk from the answer model (answer.*). See docs/USAGE.md, "Retrieval quality".
            """
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: ArgumentHelp("The judged query file (default: the pipeline's eval.queries).", valueName: "file"))
    var queries: String?

    @Option(help: "A search mode to score: vector, keyword or hybrid (repeatable; default: the store's default mode).")
    var mode: [SearchMode] = []

    @Option(name: .short, help: "Results looked at per query (1–\(SearchQuery.maxK)).")
    var k = 10

    @Flag(help: "Print the report as one JSON object (misses included).")
    var json = false

    @Flag(help: "List the queries whose answers were not all in the top k.")
    var misses = false

    @Option(help: ArgumentHelp("Write a judged query file of N questions from the index instead.", valueName: "N"))
    var generate: Int?

    @Option(help: ArgumentHelp("Where --generate writes (- for standard output).", valueName: "file"))
    var out: String?

    @Option(help: "The sample's seed for --generate: the same seed and index give the same chunks.")
    var seed: UInt64 = 1

    func validate() throws {
        guard (1...SearchQuery.maxK).contains(k) else {
            throw ValidationError("-k must be between 1 and \(SearchQuery.maxK)")
        }
        if let generate {
            guard generate >= 1 else { throw ValidationError("--generate must be at least 1") }
            guard out != nil else { throw ValidationError("--generate needs --out FILE") }
            guard queries == nil, mode.isEmpty, !json, !misses else {
                throw ValidationError("--generate writes a query file; score it with a second `sluice eval`")
            }
        } else if out != nil {
            throw ValidationError("--out is for --generate")
        }
    }

    func run() async throws {
        try await withExitMapping {
            let configuration = try options.loadConfiguration()
            if let generate, let out {
                try await write(generate, to: out, configuration: configuration)
                return
            }
            let file: URL
            if let queries {
                file = URL(fileURLWithPath: PipelineOptions.absolute(queries, FileManager.default.currentDirectoryPath))
            } else if let configured = configuration.eval.queries {
                file = configuration.resolve(configured)
            } else {
                throw SluiceError(
                    .usage,
                    "no query file: name one with --queries or eval.queries (or write one with --generate N --out FILE)"
                )
            }
            // A bad file is refused before the store is opened.
            let judged = try JudgedQuery.load(file)
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            var searcher = Searcher(embedder: components.embedder, sink: components.sink)
            searcher.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
            // One configuration per mode; another search option (a fusion, a reranker) adds its own.
            var modes: [SearchMode] = []
            for asked in mode.isEmpty ? [searcher.defaultMode] : mode where !modes.contains(asked) {
                modes.append(asked)
            }
            let evaluation = RetrievalEvaluation(searcher: searcher, k: k)
            let report = try await evaluation.evaluate(judged, configurations: modes.map { .mode($0) })
            if json {
                print(try report.json())
            } else {
                print(report.table(misses: misses), terminator: "")
            }
        }
    }

    /// `--generate N --out FILE`.
    private func write(_ count: Int, to path: String, configuration: PipelineConfiguration) async throws {
        let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
        let generator = try QuestionGenerator(configuration: configuration.answer, sink: components.sink)
        let queries = try await generator.generate(count, seed: seed)
        let text = try queries.map { try $0.jsonLine() + "\n" }.joined()
        let handle = try OutputFile.open(path)
        try handle.write(contentsOf: Data(text.utf8))
        // Fewer than asked for: a smaller index, or replies without a question.
        let asked = queries.count < count ? " (\(count) asked for)" : ""
        FileHandle.standardError.write(
            Data("sluice: wrote \(queries.count) questions to \(DisplayEscaping.escaped(path))\(asked)\n".utf8)
        )
    }
}
