import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice ask "question"`: the answer streamed to standard output, then its numbered sources.
struct AskCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ask",
        abstract: "Answer a question from the index with a chat model, citing the passages it used.",
        discussion: """
            Retrieves answer.k passages as search does (--filter, --mode, --fusion), fits them into answer.max_context_tokens, streams the answer of the \
            chat model (answer.provider, answer.model) and lists the sources its [n] markers refer to. \
            When nothing relevant is retrieved it says so without calling the model (exit 0).
            """
    )

    @Argument(help: "The question.")
    var question: String

    @OptionGroup var options: PipelineOptions

    @Option(name: .short, help: "How many passages to retrieve (overrides answer.k).")
    var k: Int?

    @Option(help: ArgumentHelp("Only passages whose metadata match it (as for search).", valueName: "filter"))
    var filter: String?

    @Option(help: "vector, keyword or hybrid (as for search; default: hybrid where the store has keyword search).")
    var mode: SearchMode?

    @Flag(name: .customLong("no-rerank"), help: "Skip the reranker (search.rerank): the first stage's passages.")
    var noRerank = false

    @Option(
        help: ArgumentHelp("How hybrid merges its rankings: score or rrf (as for search).", valueName: "rule")
    )
    var fusion: String?

    @OptionGroup var access: AccessOptions

    @Flag(help: "Print one JSON object at the end instead of streaming text.")
    var json = false

    func validate() throws {
        if let k, k < 1 { throw ValidationError("-k must be at least 1") }
        if let fusion, SearchFusion(name: fusion) == nil {
            let names = SearchFusion.names.joined(separator: ", ")
            throw ValidationError("--fusion must be one of \(names), not \(fusion)")
        }
    }

    func run() async throws {
        try await withExitMapping {
            try await options.followGenerations()
            var configuration = try options.loadConfiguration()
            let parsed = try filter.map(SearchFilter.init(parsing:))
            if let k { configuration.answer.k = k }
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            let filter = try access.restricting(parsed, configuration, sink: components.sink)
            var answerer = try Answerer(
                configuration: configuration.answer,
                embedder: components.embedder,
                sink: components.sink
            )
            answerer.indexEmbedder = Searcher.recordedEmbedder(configuration: configuration)
            if !noRerank { answerer.reranking = try SearchReranking(configuration: configuration) }
            answerer.fusion = fusion.flatMap(configuration.search.fusion(named:)) ?? configuration.search.fusion
            var output = AskOutput(json: json)
            do {
                try await answerer.answer(question, filter: filter, mode: mode) { event in output.take(event) }
            } catch {
                output.interrupted()
                throw error
            }
            output.end()
            if let notice = components.sink.readNotice {
                // The passages came from the records it could read: said, and exit 2, as `search` does.
                FileHandle.standardError.write(Data("sluice: ask: \(notice)\n".utf8))
                throw ExitCode(.documentsFailed)
            }
        }
    }
}
