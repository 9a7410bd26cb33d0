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
            Each query is searched as `sluice search` does (copies collapsed, the pipeline's fusion and \
            reranker) once per configuration: each --mode, hybrid once per --fusion, and with a reranker the \
            reranked results (--rerank: beside the first stage; a query the reranker did not order is listed). \
            --generate N --out FILE writes such a file from the index instead, with a question per sampled \
            chunk from the answer model (answer.*). See docs/USAGE.md, "Retrieval quality".
            """
    )

    @OptionGroup var options: PipelineOptions

    @Option(help: ArgumentHelp("The judged query file (default: the pipeline's eval.queries).", valueName: "file"))
    var queries: String?

    @Option(
        help: ArgumentHelp(
            "Search modes to score: vector, keyword, hybrid (comma-separated or repeated; default: the store's default mode).",
            valueName: "modes"
        )
    )
    var mode: [String] = []

    @Option(
        help: ArgumentHelp(
            "Hybrid fusions to score side by side: score, rrf (comma-separated or repeated; default: search.fusion).",
            valueName: "rules"
        )
    )
    var fusion: [String] = []

    @Flag(
        inversion: .prefixedNo,
        help: """
            With a reranker (search.rerank): --rerank scores the first stage beside the reranked results, \
            --no-rerank the first stage alone (default: the reranked results, as `sluice search` returns them).
            """
    )
    var rerank: Bool?

    /// `--generation`: which index generation is scored (docs/GENERATIONS.md).
    enum GenerationChoice: String, ExpressibleByArgument, CaseIterable {
        case active, candidate, both

        var roles: [IndexGenerations.Role] {
            switch self {
            case .active: [.active]
            case .candidate: [.candidate]
            case .both: [.active, .candidate]
            }
        }
    }

    @Option(
        help: ArgumentHelp(
            "The index generation to score: active (default), candidate, or both (rows per generation; docs/GENERATIONS.md).",
            valueName: "which"
        )
    )
    var generation: GenerationChoice?

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
            guard queries == nil, mode.isEmpty, fusion.isEmpty, rerank == nil, !json, !misses, generation == nil else {
                throw ValidationError("--generate writes a query file; score it with a second `sluice eval`")
            }
        } else if out != nil {
            throw ValidationError("--out is for --generate")
        }
        _ = try modes()
        let fusions = try fusionNames()
        if !fusions.isEmpty, let asked = try modes(), !asked.contains(.hybrid) {
            throw ValidationError("--fusion merges hybrid rankings: add hybrid to --mode")
        }
    }

    /// `--mode`'s modes in the order given, without repeats; nil when none is named.
    func modes() throws -> [SearchMode]? {
        let names = Self.list(mode)
        guard !names.isEmpty else { return nil }
        var modes: [SearchMode] = []
        for name in names {
            guard let mode = SearchMode(rawValue: name) else {
                let known = SearchMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("--mode must be one of \(known), not \(name)")
            }
            if !modes.contains(mode) { modes.append(mode) }
        }
        return modes
    }

    /// `--fusion`'s names in the order given, without repeats.
    func fusionNames() throws -> [String] {
        var names: [String] = []
        for name in Self.list(fusion) {
            guard SearchFusion.names.contains(name) else {
                throw ValidationError(
                    "--fusion must be one of \(SearchFusion.names.joined(separator: ", ")), not \(name)"
                )
            }
            if !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// Repeated values, each possibly a comma-separated list.
    static func list(_ values: [String]) -> [String] {
        values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    func run() async throws {
        try await withExitMapping {
            try await options.followGenerations()
            let base = try options.loadConfiguration(generation: nil)
            let load = options.configurationLoader().file(extra:)
            if let generate, let out {
                let active = try IndexGenerations.configuration(.active, base: base, load: load)
                try await write(generate, to: out, configuration: active)
                return
            }
            // The judged queries and the search settings are the pipeline's, the same in every generation.
            let configuration = base
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
            var report: RetrievalReport?
            for role in (generation ?? .active).roles {
                let scored = try IndexGenerations.configuration(role, base: base, load: load)
                var part = try await evaluate(judged, configuration: scored)
                if generation != nil {
                    part.label(.init(role: "\(role)", id: IndexGenerations.id(of: scored)))
                }
                if report == nil { report = part } else { report?.append(contentsOf: part) }
            }
            guard let report else { return }
            if json {
                print(try report.json())
            } else {
                print(report.table(misses: misses), terminator: "")
            }
        }
    }

    /// Scores `judged` on the generation `configuration` names, searched as `sluice search` searches it (the
    /// pipeline's fusion and reranker): one configuration per mode, per fusion of hybrid, and per stage of a
    /// search with a reranker.
    private func evaluate(_ judged: [JudgedQuery], configuration: PipelineConfiguration) async throws -> RetrievalReport
    {
        let searcher = try RetrievalEvaluation.pipelineSearcher(configuration: configuration, rerank: rerank)
        if rerank == true, searcher.reranking == nil {
            throw SluiceError(
                .usage,
                "--rerank scores the reranker, and the pipeline has none: set search.rerank (docs/USAGE.md, \"Reranking\")"
            )
        }
        let configurations = try RetrievalEvaluation.configurations(
            modes: try modes() ?? [searcher.defaultMode],
            fusions: try fusionNames().compactMap(configuration.search.fusion(named:)),
            rerank: searcher.reranking == nil ? .firstStage : rerank == true ? .both : .reranked
        )
        return try await RetrievalEvaluation(searcher: searcher, k: k).evaluate(judged, configurations: configurations)
    }

    /// `--generate N --out FILE`.
    private func write(_ count: Int, to path: String, configuration: PipelineConfiguration) async throws {
        // Checked before the answer model is asked for anything (its questions are paid for).
        try OutputFile.check(path, inputs: RunCommand.readPaths(configuration))
        let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
        let generator = try QuestionGenerator(configuration: configuration.answer, sink: components.sink)
        let queries = try await generator.generate(count, seed: seed)
        let text = try queries.map { try $0.jsonLine() + "\n" }.joined()
        let handle = try OutputFile.open(path, inputs: RunCommand.readPaths(configuration))
        try handle.write(contentsOf: Data(text.utf8))
        // Fewer than asked for: a smaller index, or replies without a question.
        let asked = queries.count < count ? " (\(count) asked for)" : ""
        FileHandle.standardError.write(
            Data("sluice: wrote \(queries.count) questions to \(DisplayEscaping.escaped(path))\(asked)\n".utf8)
        )
    }
}
