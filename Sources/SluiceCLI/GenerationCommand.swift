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
            incomplete, or its nDCG@10 on the judged queries is below the active generation's or --min-ndcg), \
            nothing changed. docs/GENERATIONS.md.
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
                let generations = IndexGenerations(configuration: configuration)
                let candidate = try await generations.start(overrides: settings)
                print(
                    "started candidate generation \(candidate): `sluice run \(options.pipeline)` builds it (and keeps the active one current)"
                )
                // The room the build needs, before it starts: about a copy of the active generation.
                if let room = try await generations.activeSize() {
                    print(
                        "room: the active generation \(room.id) takes \(room.size.description); the candidate needs about as much again beside it (more with more dimensions or smaller chunks) until one of them is dropped"
                    )
                }
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract:
                "The generations: settings, completeness, documents, vectors and size of each; the last quality comparison."
        )

        @OptionGroup var options: PipelineOptions

        @Flag(help: "Print as one JSON object: active, candidate, previous (null when absent), comparison.")
        var json = false

        func run() async throws {
            try await withExitMapping {
                try await options.followGenerations()
                let configuration = try options.loadConfiguration(generation: nil)
                let report = try await IndexGenerations(configuration: configuration).report()
                if json {
                    let encoder = JSONEncoder()
                    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                    print(String(decoding: try encoder.encode(report), as: UTF8.self))
                    return
                }
                guard !report.all.isEmpty else {
                    print(
                        "no generations: the index is the pipeline file's (start a candidate with `sluice generation start`)"
                    )
                    return
                }
                for generation in report.all { print(Self.line(generation)) }
                for line in report.shards.map(Self.lines) ?? [] { print(line) }
                if let line = report.comparison?.statusLine { print(DisplayEscaping.escaped(line)) }
            }
        }

        /// A sharded deployment's parts of the candidate, a line per shard.
        static func lines(_ shards: ShardsReport) -> [String] {
            guard let candidate = shards.candidate else { return ["shards: \(shards.count) · no candidate"] }
            var lines = [
                "shards: \(shards.count) · candidate \(candidate): \(shards.completeParts) of \(shards.count) parts complete"
            ]
            for part in shards.parts {
                let name = "  shard \(part.shard)/\(shards.count): "
                guard part.started else {
                    lines.append(name + "not built yet")
                    continue
                }
                let counts = part.documents.map { "\($0) documents, \(part.vectors ?? 0) vectors" }
                if part.complete {
                    lines.append(name + "complete" + (counts.map { " · " + $0 } ?? ""))
                } else if let counts {
                    let found = [
                        part.missing > 0 ? "\(part.missing) missing" : nil,
                        part.extra > 0 ? "\(part.extra) not in the active one" : nil,
                        part.pending > 0 ? "\(part.pending) with a write pending" : nil,
                    ].compactMap { $0 }
                    lines.append(name + "not complete: " + found.joined(separator: ", ") + " · " + counts)
                } else {
                    lines.append(name + "not complete (a run of it is building it, or its last run did not end)")
                }
            }
            return lines
        }

        static func line(_ report: GenerationReport) -> String {
            let documents = report.documents.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            let settings = report.overrides.isEmpty ? "the pipeline file's" : report.overrides.joined(separator: " ")
            var line =
                "\(report.role): \(report.id) · documents \(documents.isEmpty ? "0" : documents.joined(separator: ", "))"
                + " · vectors \(report.vectors) · "
                + Self.place(report)
                + " · settings: \(settings) · embedder \(report.embedder ?? "none yet")"
            if let completeness = report.completeness, report.role != "active" || !completeness.complete {
                line += " · " + Self.describe(completeness)
            }
            return DisplayEscaping.escaped(line)
        }

        /// The size of a local store's folder (its path is long), or where the generation is with its size.
        static func place(_ report: GenerationReport) -> String {
            let size = report.bytes.map {
                GenerationReport.Size(bytes: $0, estimated: report.bytesEstimated).description
            }
            if report.store.hasPrefix("/") { return size ?? report.store }
            return [report.store, size].compactMap { $0 }.joined(separator: ", ")
        }

        /// `complete`, or what promote would find missing.
        static func describe(_ completeness: GenerationReport.Completeness) -> String {
            guard !completeness.complete else { return "complete" }
            let parts = [
                completeness.missing > 0 ? "\(completeness.missing) missing" : nil,
                completeness.extra > 0 ? "\(completeness.extra) not in the active one" : nil,
                completeness.pending > 0 ? "\(completeness.pending) with a write pending" : nil,
            ].compactMap { $0 }
            return "incomplete: " + parts.joined(separator: ", ")
        }

    }

    struct Promote: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "promote",
            abstract:
                "Make the candidate active in one atomic step; the active one is kept for a rollback.",
            discussion: """
                Refused (exit 8, nothing changed) while the candidate is incomplete, and, with a judged query file \
                (--queries, else eval.queries), when its nDCG@10 in the pipeline's search mode is below the active \
                generation's (or below --min-ndcg). --skip-eval promotes without comparing. docs/GENERATIONS.md.
                """
        )

        @OptionGroup var options: PipelineOptions

        @Option(
            help: ArgumentHelp(
                "The judged query file the generations are compared on (default: the pipeline's eval.queries).",
                valueName: "file"
            )
        )
        var queries: String?

        @Option(
            help: ArgumentHelp(
                "Refuse when the candidate's nDCG@10 is below this (0–1) instead of below the active generation's.",
                valueName: "x"
            )
        )
        var minNdcg: Double?

        @Flag(help: "Promote without comparing the generations' quality (completeness is still checked).")
        var skipEval = false

        func validate() throws {
            if let minNdcg, !(0...1).contains(minNdcg) {
                throw ValidationError("--min-ndcg must be between 0 and 1")
            }
            if skipEval, queries != nil || minNdcg != nil {
                throw ValidationError("--skip-eval promotes without comparing: leave out --queries and --min-ndcg")
            }
        }

        func run() async throws {
            try await withExitMapping {
                let configuration = try options.loadConfiguration(generation: nil)
                let generations = IndexGenerations(configuration: configuration)
                let file: URL?
                if skipEval {
                    file = nil
                } else if let queries {
                    file = URL(
                        fileURLWithPath: PipelineOptions.absolute(queries, FileManager.default.currentDirectoryPath)
                    )
                } else {
                    file = configuration.eval.queries.map { configuration.resolve($0) }
                }
                if minNdcg != nil, file == nil {
                    throw SluiceError(
                        .usage,
                        "--min-ndcg needs a judged query file: --queries FILE, or eval.queries in the pipeline"
                    )
                }
                var gate: IndexGenerations.QualityGate?
                if let file {
                    // A bad file is refused before anything is locked or scored.
                    gate = IndexGenerations.QualityGate(
                        queries: try JudgedQuery.load(file),
                        file: file.path,
                        minimum: minNdcg
                    )
                }
                let loader = options.configurationLoader()
                let promotion = try await generations.promote(
                    gate: gate.map { gate in
                        { active, candidate in
                            try await generations.compare(
                                active: active,
                                candidate: candidate,
                                gate: gate,
                                base: configuration,
                                load: loader.file(extra:)
                            )
                        }
                    }
                )
                if let comparison = promotion.comparison {
                    print(
                        DisplayEscaping.escaped(
                            "quality check passed: \(comparison.summary); not below \(comparison.bar)"
                        )
                    )
                } else {
                    print(
                        skipEval
                            ? "no quality check was made (--skip-eval)"
                            : "no quality check was made: no judged query file (set eval.queries, or --queries FILE)"
                    )
                }
                print(
                    "generation \(promotion.active) is active; \(promotion.previous) is kept for `sluice generation rollback` until `sluice generation drop --previous`"
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
                let switched = try await IndexGenerations(configuration: configuration).rollback()
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
                let dropped = try await IndexGenerations(configuration: configuration).drop(previous: previous)
                print("dropped generation \(dropped): its store and its document records")
            }
        }
    }
}
