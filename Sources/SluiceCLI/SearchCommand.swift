import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the pipeline's index: vector, keyword or hybrid ranking, with filters.",
        discussion: """
            Filters (--filter) are applied by the store itself: format = pdf and page >= 3,
            document_key ^= "reports/", tags in (a, b), mtime >= 2026-01-01, title exists; or the JSON form
            {"page": {"$gte": 3}}. A filter the store cannot express is refused. With a reranker
            (search.rerank) the first stage's best top_n results are re-scored, within its deadline; past it
            the first stage's order is printed and said so. See docs/USAGE.md.
            """
    )

    @Argument(help: "The query text.")
    var query: String

    @OptionGroup var options: PipelineOptions

    @Option(name: .short, help: "How many results (1–\(SearchQuery.maxK)).")
    var k = 5

    @Option(help: ArgumentHelp("A filter on the records' metadata (see above).", valueName: "filter"))
    var filter: String?

    @Option(help: "vector, keyword or hybrid (default: hybrid where the store has keyword search, else vector).")
    var mode: SearchMode?

    @Option(
        help: ArgumentHelp(
            "How hybrid merges the vector and keyword rankings: score or rrf (default: search.fusion, score).",
            valueName: "rule"
        )
    )
    var fusion: String?

    @Option(
        name: .customLong("min-score"),
        help: "Leave out results less similar than this (cosine; the keyword score in keyword mode)."
    )
    var minScore: Double?

    @Flag(name: .customLong("no-collapse"), help: "List every copy of a text instead of collapsing them.")
    var noCollapse = false

    @Flag(name: .customLong("no-rerank"), help: "Skip the reranker (search.rerank): the first stage's order.")
    var noRerank = false

    @OptionGroup var access: AccessOptions

    @Flag(help: "Print results as JSON lines (with a reranker, each line has `rerank`: model, applied, reason).")
    var json = false

    func validate() throws {
        if let fusion, SearchFusion(name: fusion) == nil {
            let names = SearchFusion.names.joined(separator: ", ")
            throw ValidationError("--fusion must be one of \(names), not \(fusion)")
        }
    }

    func run() async throws {
        try await withExitMapping {
            var query = SearchQuery(
                text: query,
                k: k,
                filter: try filter.map(SearchFilter.init(parsing:)),
                mode: mode,
                minScore: minScore,
                collapseDuplicates: !noCollapse
            )
            try await options.followGenerations()
            let configuration = try options.loadConfiguration()
            query.fusion = fusion.flatMap(configuration.search.fusion(named:))
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            query.filter = try access.restricting(query.filter, configuration, sink: components.sink)
            var searcher = Searcher(embedder: components.embedder, sink: components.sink)
            searcher.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
            searcher.fusion = configuration.search.fusion
            if !noRerank { searcher.reranking = try SearchReranking(configuration: configuration) }
            let outcome = try await searcher.searchOutcome(query)
            let results = outcome.results
            if !json, let rerank = outcome.rerank { print(Self.rerankLine(rerank)) }
            for result in results {
                if json {
                    print(try MachineReadable.jsonLine(SearchLine(result: result, rerank: outcome.rerank)))
                } else {
                    var place = DisplayEscaping.escaped(result.documentKey)
                    if let page = result.page { place += " p.\(page)" }
                    place += " #\(result.ordinal)"
                    if !result.headings.isEmpty {
                        place += " · " + DisplayEscaping.escaped(result.headings.joined(separator: " > "))
                    }
                    // Hybrid ranks by a fused score: the cosine `--min-score` compares is shown beside it.
                    let cosine = result.vectorScore.flatMap {
                        $0 == result.score ? nil : "  cosine " + String(format: "%.4f", $0)
                    }
                    // Reranked: the reranker's score first, the first stage's beside it.
                    let rerank = result.rerankScore.map {
                        String(format: "%.4f", $0) + "  first " + String(format: "%.4f", result.score)
                    }
                    print((rerank ?? String(format: "%.4f", result.score)) + (cosine ?? "") + "  " + place)
                    print("        " + DisplayEscaping.escaped(result.snippet))
                    if !result.duplicates.isEmpty {
                        let others = result.duplicates.prefix(3).map { DisplayEscaping.escaped($0.documentKey) }
                        let more = result.duplicates.count > 3 ? " and \(result.duplicates.count - 3) more" : ""
                        print("        also in " + others.joined(separator: ", ") + more)
                    }
                }
            }
            if results.isEmpty && !json { print(Self.emptyAnswer(filter: filter, minScore: minScore)) }
            if let notice = components.sink.readNotice {
                // The results are those of the records it could read: said, and exit 2, as `export` does
                // when it leaves records out (docs/RELIABILITY.md).
                FileHandle.standardError.write(Data("sluice: search: \(notice)\n".utf8))
                throw ExitCode(.documentsFailed)
            }
        }
    }

    /// The line above the results that says whether the reranker ordered them.
    static func rerankLine(_ status: RerankStatus) -> String {
        let model = DisplayEscaping.escaped(status.model)
        guard !status.applied else { return "reranked by \(model)" }
        return "not reranked (\(model)): " + DisplayEscaping.escaped(status.reason ?? "")
    }

    /// One line of `--json`: the result's fields, and `rerank` when the pipeline has a reranker.
    struct SearchLine: Encodable {
        var result: SearchResult
        var rerank: RerankStatus?

        enum CodingKeys: String, CodingKey { case rerank }

        func encode(to encoder: any Encoder) throws {
            try result.encode(to: encoder)
            guard let rerank else { return }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(rerank, forKey: .rerank)
        }
    }

    /// Why a search found nothing: what the query left out, or (with nothing left out) an empty store.
    static func emptyAnswer(filter: String?, minScore: Double?) -> String {
        let score = minScore.map { "a score at or above --min-score \($0)" }
        switch (filter, score) {
        case (_?, let score?):
            return "no results: no record matches --filter with \(score)"
        case (_?, nil):
            return
                "no results: no record matches --filter (`sluice export` shows the records' metadata; `format` is the reader's name: markdown, text, pdf, …)"
        case (nil, let score?):
            return "no results with \(score) (hybrid and vector results show their cosine)"
        case (nil, nil):
            return "no results (is the store empty? run `sluice run` first)"
        }
    }
}

extension SearchMode: ExpressibleByArgument {}
