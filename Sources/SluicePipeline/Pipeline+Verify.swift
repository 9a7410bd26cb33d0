import Foundation
import Logging
import SluiceCore
import SluiceState

/// What `sluice verify` found (and, with `--repair`, did).
public struct VerifyReport: Sendable {
    /// Documents in the checkpoint.
    public var documents = 0
    /// Vector ids the checkpoint says the store holds.
    public var tracked = 0
    /// Vectors in the store.
    public var stored = 0
    /// The state's shard (`K/N`) when it is one shard of several; nil for an unsharded state.
    public var shard: String?
    /// With a shard: the store's vectors of documents that shard owns (the others' are not compared).
    public var storedInShard: Int?
    /// Documents whose vectors the store lacks, with how many are missing.
    public var missing: [String: Int] = [:]
    /// Ids in the store the checkpoint does not know (empty when the store cannot list ids).
    public var unknown: [VectorID] = []
    /// Whether the store could list its ids (so unknown ones could be looked for).
    public var listable = true
    /// With repair: unknown ids deleted, and the run that re-upserted the missing documents.
    public var deletedUnknown = 0
    public var repairRun: RunStats?
    /// With repair: documents whose records could not be read, forgotten so that they are processed again.
    public var forgottenRecords: [String] = []
    /// With repair: ids of run records that could not be read, forgotten (the run history only).
    public var forgottenRuns: [String] = []
    /// The store's records that cannot be read (``VectorSink/unreadableRecords()``), with the document key from
    /// the record's bytes or, when those do not give it, from the checkpoint. With repair, deleted from the
    /// store: their documents then miss those vectors and are processed again.
    public var unreadable: [UnreadableRecord] = []

    public var missingCount: Int { missing.values.reduce(0, +) }
    public var isConsistent: Bool {
        missing.isEmpty && unknown.isEmpty && forgottenRecords.isEmpty && unreadable.isEmpty
    }
}

extension Pipeline {
    /// Reconciles the checkpoint with the store: vectors the checkpoint says exist but the store lacks,
    /// and vectors in the store the checkpoint does not know (for stores that can list ids).
    ///
    /// With `repair`, unknown vectors are deleted (within the mass-delete guard) and the documents with
    /// missing vectors are marked failed (`missing-in-sink`) and processed again, which takes their
    /// vectors from the embedding cache: nothing is paid for twice. The store's records that cannot be read are
    /// reported; with `repair` they are deleted first, so their documents are among those missing vectors.
    public func verify(repair: Bool, shutdown: ShutdownSignal = ShutdownSignal()) async throws -> VerifyReport {
        var report = VerifyReport()
        var byDocument: [String: [VectorID]] = [:]
        var known = Set<VectorID>()
        do {
            let lock = try StateLock(directory: stateDirectory)
            defer { withExtendedLifetime(lock) {} }
            let checkpoint = try CheckpointStore(directory: stateDirectory, generation: configuration.generation)
            if repair {
                // Records that cannot be read are forgotten: their documents are new to the repair run,
                // and their vectors it does not write again are unknown below, and deleted.
                report.forgottenRecords = try checkpoint.removeUndecodableDocuments()
                if !report.forgottenRecords.isEmpty {
                    logger.warning(
                        "verify: forgot document records that could not be read",
                        metadata: ["sluice-documents": "\(report.forgottenRecords.count)"]
                    )
                }
                report.forgottenRuns = try checkpoint.removeUndecodableRuns()
                if !report.forgottenRuns.isEmpty {
                    logger.warning(
                        "verify: forgot run records that could not be read",
                        metadata: ["sluice-runs": "\(report.forgottenRuns.count)"]
                    )
                }
            }
            try checkpoint.forEachDocument { record in
                report.documents += 1
                report.tracked += record.chunkIDs.count
                byDocument[record.key] = record.chunkIDs
                known.formUnion(record.knownIDs)
            }
            let sink = components.sink
            report.unreadable = try await unreadableRecords(in: sink, documents: byDocument)
            if repair, !report.unreadable.isEmpty {
                try await deleteUnreadable(report.unreadable, from: sink)
            }
            // A shard's state is compared with its own documents' vectors (docs/OPERATIONS.md), and its
            // repair run is a run of that shard.
            let shard = try checkpoint.metadata("shard").map(Shard.init(parsing:)) ?? .whole
            report.shard = shard.count > 1 ? shard.description : nil
            let present: Set<VectorID>
            if let all = try await sink.listIDs() {
                present = shard.count > 1 ? try await storedIDs(ownedBy: shard, in: sink) : all
                if shard.count > 1 { report.storedInShard = present.count }
                report.unknown = present.subtracting(known).sorted()
            } else {
                report.listable = false
                var found = Set<VectorID>()
                let expected = byDocument.values.flatMap { $0 }
                var start = 0
                while start < expected.count {
                    let end = min(start + 1000, expected.count)
                    found.formUnion(try await sink.existing(Array(expected[start..<end])))
                    start = end
                }
                present = found
            }
            report.stored = try await sink.count()
            for (key, ids) in byDocument {
                let lacking = ids.filter { !present.contains($0) }.count
                if lacking > 0 { report.missing[key] = lacking }
            }
            guard repair, !report.isConsistent else { return report }

            if !report.unknown.isEmpty {
                try checkMassDelete(
                    deleting: report.unknown.count,
                    documents: 0,
                    stored: report.storedInShard ?? report.stored
                )
                var start = 0
                while start < report.unknown.count {
                    let end = min(start + 1000, report.unknown.count)
                    try await sink.delete(Array(report.unknown[start..<end]))
                    start = end
                }
                report.deletedUnknown = report.unknown.count
                CrashPoint.reach("verify.unknown-deleted")
                logger.info(
                    "verify: deleted vectors the checkpoint does not know",
                    metadata: ["sluice-vectors": "\(report.unknown.count)"]
                )
            }
            if !report.missing.isEmpty {
                let keys = Array(report.missing.keys)
                let missing = report.missing
                var records = Array(try checkpoint.documents(keys).values)
                for index in records.indices {
                    records[index].status = .failed
                    records[index].error = .init(
                        code: "missing-in-sink",
                        message:
                            "\(missing[records[index].key] ?? 0) vectors missing from the store (found by sluice verify)"
                    )
                }
                let marked = records
                let executor = BlockingExecutor(label: "sl-verify", threads: 1)
                defer { executor.shutdown() }
                try await executor.run { try checkpoint.commit(put: marked) }
                CrashPoint.reach("verify.missing-marked")
            }
            try await sink.finish()
        }
        guard !report.missing.isEmpty || !report.forgottenRecords.isEmpty else { return report }
        // Re-process the documents marked above (and any that failed before): the lock is taken again by
        // the run.
        var options = self.options
        options.shard = try report.shard.map(Shard.init(parsing:)) ?? options.shard
        // Forgotten records' documents have no record at all: an incremental run takes them (and the
        // failed ones) up; otherwise only the failed ones.
        options.retryFailed = report.forgottenRecords.isEmpty
        let run = Pipeline(configuration: configuration, components: components, options: options, logger: logger)
        report.repairRun = try await run.run(shutdown: shutdown)
        return report
    }
}
