import ArgumentParser
import Foundation
import Sluice

struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Embed a query with the pipeline's embedder and list the top matches."
    )

    @Argument(help: "The query text.")
    var query: String

    @OptionGroup var options: PipelineOptions

    @Option(name: .short, help: "How many results.")
    var k = 5

    @Flag(help: "Print results as JSON lines.")
    var json = false

    func run() async throws {
        try await withExitMapping {
            let configuration = try options.loadConfiguration()
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
            let vector = try await components.embedder.embed([query])[0]
            if let problem = VectorMath.problem(vector) { throw SluiceError(.embeddingFailed, "the query: \(problem)") }
            let hits = try await components.sink.search(vector, k: k)
            for hit in hits {
                if json {
                    let object: [String: Any] = [
                        "score": Double(hit.score), "id": hit.record.id.rawValue, "document": hit.record.documentKey,
                        "ordinal": hit.record.ordinal, "text": hit.record.text, "metadata": hit.record.metadata,
                    ]
                    let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
                    print(String(decoding: data, as: UTF8.self))
                } else {
                    let snippet = DisplayEscaping.escaped(Chunk.normalize(hit.record.text))
                    let short = snippet.count > 160 ? String(snippet.prefix(160)) + "…" : snippet
                    print(
                        String(format: "%.4f", hit.score)
                            + "  \(DisplayEscaping.escaped(hit.record.documentKey)) #\(hit.record.ordinal)"
                    )
                    print("        \(short)")
                }
            }
            if hits.isEmpty && !json { print("no results (is the store empty? run `sluice run` first)") }
        }
    }
}
