import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice sink info|drop`: the configured store itself.
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract: "Inspect or drop the configured vector store.",
        subcommands: [Info.self, Drop.self]
    )

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "info",
            abstract: "Count, dimension and metric of the store."
        )

        @OptionGroup var options: PipelineOptions

        @Flag(help: "Print as JSON.")
        var json = false

        func run() async throws {
            try await withExitMapping {
                try await options.followGenerations()
                let configuration = try options.loadConfiguration()
                let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: true)
                let info = try await components.sink.info()
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(info), as: UTF8.self))
                    return
                }
                print("sink: \(DisplayEscaping.escaped(info.name))")
                print("exists: \(info.exists ? "yes" : "no (created on the first run)")")
                print("count: \(info.count)")
                print("dimensions: \(info.dimensions.map(String.init) ?? "unknown")")
                print("metric: \(info.metric ?? "unknown")")
                if let embedder = info.embedder { print("embedder: \(embedder)") }
                for (key, value) in info.details.sorted(by: { $0.key < $1.key }) {
                    print(DisplayEscaping.escaped("\(key): \(value)"))
                }
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop",
            abstract:
                "Remove the store's collection/table/files, and forget the checkpoint's documents so the next run loads everything again."
        )

        @OptionGroup var options: PipelineOptions

        @Flag(help: "Required: confirms that every vector is to be deleted.")
        var yes = false

        func run() async throws {
            try await withExitMapping {
                guard yes else {
                    throw SluiceError(.usage, "sink drop deletes every vector of the store: pass --yes to confirm")
                }
                try await options.followGenerations()
                let configuration = try options.loadConfiguration()
                let components = try PipelineComponents.standard(configuration: configuration)
                let pipeline = Pipeline(
                    configuration: configuration,
                    components: components,
                    logger: options.makeLogger()
                )
                try await pipeline.dropSink()
                print(
                    "dropped \(DisplayEscaping.escaped(components.sink.name)); the checkpoint's documents were forgotten (the embedding cache is kept)"
                )
            }
        }
    }
}
