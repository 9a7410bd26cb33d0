import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract:
            "Reconcile the checkpoint with the store: vectors missing from the store, and vectors it holds that the checkpoint does not know.",
        discussion:
            "Records of the store that cannot be read (a damaged local store) are reported too, and --repair deletes them so their documents are embedded again. Exit 0 when consistent (or repaired), 2 when differences were found and not repaired."
    )

    @OptionGroup var options: PipelineOptions

    @Flag(help: "Re-upsert missing vectors (from the embedding cache, not paying again) and delete unknown ones.")
    var repair = false

    @Flag(help: "Let --repair delete more than run.max_delete_fraction of the store.")
    var allowMassDelete = false

    @Flag(
        help: "Print one JSON document (snake_case keys, as --stats-json) instead of text; the exit code is the same."
    )
    var json = false

    func run() async throws {
        try await withExitMapping {
            let logger = options.makeLogger()
            try await options.followGenerations()
            let configuration = try options.loadConfiguration()
            var runOptions = RunOptions()
            runOptions.allowMassDelete = allowMassDelete
            // Nothing to compare without a state: refused before the store or the state is opened for writing
            // (which would create them, and a mistyped path would read as "consistent"). The store's settings
            // are checked first (read-only: a password in its URL is refused as it is with a state).
            let state = configuration.resolve(configuration.state).appendingPathComponent("data.mdb")
            let stateExists = FileManager.default.fileExists(atPath: state.path)
            let components = try PipelineComponents.standard(configuration: configuration, readOnlySink: !stateExists)
            guard stateExists else {
                throw SluiceError(
                    .usage,
                    "no state at \(configuration.resolve(configuration.state).path): run the pipeline first"
                )
            }
            let pipeline = Pipeline(
                configuration: configuration,
                components: components,
                options: runOptions,
                logger: logger
            )
            let report = try await BatchJob.run(logger: logger) { shutdown in
                try await pipeline.verify(repair: repair, shutdown: shutdown)
            }
            if json {
                try MachineReadable.print(MachineReadable.verify(report, sink: components.sink.name, repair: repair))
                if repair {
                    if let run = report.repairRun, run.exitCode != .success { throw ExitCode(run.exitCode) }
                } else if !report.isConsistent {
                    throw ExitCode(.documentsFailed)
                }
                return
            }
            print("sink: \(DisplayEscaping.escaped(components.sink.name))")
            print(
                "checkpoint: \(report.documents) documents, \(report.tracked) vectors tracked · store: \(report.stored) vectors"
            )
            if let shard = report.shard, let owned = report.storedInShard {
                print("shard \(shard): \(owned) of the store's vectors are its documents'; only those are compared")
            }
            if !report.forgottenRecords.isEmpty {
                print("unreadable document records forgotten: \(report.forgottenRecords.count) (processed again)")
                for key in report.forgottenRecords.prefix(20) { print("  forgotten  \(DisplayEscaping.escaped(key))") }
            }
            if !report.forgottenRuns.isEmpty {
                print("unreadable run records forgotten: \(report.forgottenRuns.count) (the run history only)")
            }
            if !report.unreadable.isEmpty {
                print(
                    "unreadable in the store: \(report.unreadable.count) records"
                        + (repair ? " (deleted: their documents are embedded again)" : "")
                )
                for record in report.unreadable.prefix(20) {
                    let key = record.documentKey.map { DisplayEscaping.escaped($0) } ?? "(document key unreadable)"
                    print("  unreadable  \(record.id)  \(key)  \(DisplayEscaping.escaped(record.reason))")
                }
            }
            print("missing from the store: \(report.missingCount) vectors in \(report.missing.count) documents")
            for (key, count) in report.missing.sorted(by: { $0.key < $1.key }).prefix(50) {
                print("  missing  \(DisplayEscaping.escaped(key))  (\(count))")
            }
            if report.listable {
                print("unknown to the checkpoint: \(report.unknown.count) vectors")
                for id in report.unknown.prefix(20) { print("  unknown  \(id)") }
            } else {
                print("unknown to the checkpoint: not checked (this store cannot list its ids)")
            }
            if repair {
                if report.isConsistent {
                    print("consistent: nothing to repair")
                } else {
                    print(
                        "repaired: deleted \(report.deletedUnknown) unknown vectors"
                            + (report.repairRun.map {
                                ", re-upserted \($0.vectorsUpserted) vectors of \($0.documentsUpserted) documents (\($0.chunksEmbedded) chunks embedded, the rest from the cache)"
                            } ?? "")
                    )
                }
                if let run = report.repairRun, run.exitCode != .success { throw ExitCode(run.exitCode) }
            } else if !report.isConsistent {
                print("run `sluice verify --repair` to fix")
                throw ExitCode(.documentsFailed)
            } else {
                print("consistent")
            }
        }
    }
}
