import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

/// `sluice generation start|status|promote|rollback|drop`: change the model or the chunking of a served
/// index without downtime (docs/GENERATIONS.md).
struct GenerationCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generation",
        abstract: "Build a candidate index beside the active one (another model or chunking), then switch atomically.",
        discussion: """
            sluice generation start PIPELINE --set embed.model=… · sluice run PIPELINE (builds the candidate and \
            keeps both current; resumable) · sluice generation promote PIPELINE · sluice generation rollback \
            PIPELINE · sluice generation drop PIPELINE [--previous]. Exit 8: promote refused (the candidate is \
            incomplete), nothing changed. docs/GENERATIONS.md.
            """,
        subcommands: [Start.self, Status.self, Promote.self, Rollback.self, Drop.self]
    )

    struct Start: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "start",
            abstract:
                "Start a candidate generation: the active one's settings with these --set embed.*/chunk.* changes. `sluice run` builds it."
        )

        @OptionGroup var options: PipelineOptions

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                // The settings that change vectors are the candidate's; the others (`sink.path`, …) locate the
                // index, as for every command.
                let settings = options.overrides.filter(IndexGenerations.changesVectors)
                let candidate = try IndexGenerations(configuration: configuration).start(overrides: settings)
                print(
                    "started candidate generation \(candidate): `sluice run \(options.pipeline)` builds it (and keeps the active one current)"
                )
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "The generations: documents, vectors, settings and size of each."
        )

        @OptionGroup var options: PipelineOptions

        @Flag(help: "Print as JSON.")
        var json = false

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                let reports = try IndexGenerations(configuration: configuration).report()
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys]
                    print(String(decoding: try encoder.encode(reports), as: UTF8.self))
                    return
                }
                guard !reports.isEmpty else {
                    print(
                        "no generations: the index is the pipeline file's (start a candidate with `sluice generation start`)"
                    )
                    return
                }
                for report in reports { print(Self.line(report)) }
            }
        }

        static func line(_ report: GenerationReport) -> String {
            let documents = report.documents.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            let settings = report.overrides.isEmpty ? "the pipeline file's" : report.overrides.joined(separator: " ")
            return DisplayEscaping.escaped(
                "\(report.role): \(report.id) · documents \(documents.isEmpty ? "0" : documents.joined(separator: ", "))"
                    + " · vectors \(report.vectors) · \(String(format: "%.1f", Double(report.bytes) / 1_048_576)) MB"
                    + " · settings: \(settings) · embedder \(report.embedder ?? "none yet")"
            )
        }
    }

    struct Promote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "promote",
            abstract:
                "Make the candidate active in one atomic step (refused, exit 8, while it is incomplete); the active one is kept for a rollback."
        )

        @OptionGroup var options: PipelineOptions

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                let switched = try IndexGenerations(configuration: configuration).promote()
                print(
                    "generation \(switched.active) is active; \(switched.previous) is kept for `sluice generation rollback` until `sluice generation drop --previous`"
                )
            }
        }
    }

    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rollback",
            abstract: "Make the previous generation active again, as it was; the one it replaces becomes the candidate."
        )

        @OptionGroup var options: PipelineOptions

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                let switched = try IndexGenerations(configuration: configuration).rollback()
                print(
                    "generation \(switched.active) is active again; \(switched.candidate) is the candidate (promote it again, or drop it)"
                )
            }
        }
    }

    struct Drop: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "drop",
            abstract: "Delete the candidate generation (or, with --previous, the one kept for a rollback)."
        )

        @OptionGroup var options: PipelineOptions

        @Flag(help: "Drop the previous generation instead of the candidate.")
        var previous = false

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                let dropped = try IndexGenerations(configuration: configuration).drop(previous: previous)
                print("dropped generation \(dropped): its store and its document records")
            }
        }
    }
}
