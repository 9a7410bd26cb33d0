import Foundation
import SluiceCore
import SluiceState

/// Writes documents' vectors to the sink and deletes their stale ones.
///
/// Order per batch of documents, so that a crash at any point leaves nothing the checkpoint forgot:
/// 1. record the ids about to be written as *pending* in the checkpoint;
/// 2. upsert the records (batched by `sink.batch`);
/// 3. delete ids the document had before and no longer has (committed or pending from a crashed attempt);
/// 4. hand the documents to the commit stage, which marks them indexed.
///
/// A document that changed and whose new version failed before reaching the sink has the vectors of its
/// indexed version deleted here too (``DocumentWork/hasKnownStaleVectors``), within the run's
/// ``StaleDeletionBudget``: the checkpoint marks it as being removed first (``CheckpointStore/markRemoving(_:)``),
/// and the commit stage then records that nothing of it is in the sink.
package actor UpsertStage {
    private enum State { case initial, running, finished }

    package nonisolated let meter: StageMeter
    private let sink: any VectorSink
    private let checkpoint: CheckpointStore
    private let stateExecutor: BlockingExecutor
    /// The pending ids' writes, committed with the other stages' waiting state writes.
    private let checkpointCommits: CheckpointCommits
    private let workers: Int
    private let recordsPerWrite: Int
    private let tally: RunTally
    private let staleBudget: StaleDeletionBudget
    /// Called when a write finds the disk full (the local store's or the state's): the run stops intake.
    private let onDiskFull: @Sendable (SluiceError) -> Void
    /// Called when the checkpoint cannot be read (``StateDamage``): the run stops intake and fails with it.
    private let onStateDamage: @Sendable (SluiceError) -> Void
    private var state = State.initial

    package init(
        sink: any VectorSink,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        checkpointCommits: CheckpointCommits,
        workers: Int,
        recordsPerWrite: Int,
        tally: RunTally,
        staleBudget: StaleDeletionBudget,
        onDiskFull: @escaping @Sendable (SluiceError) -> Void = { _ in },
        onStateDamage: @escaping @Sendable (SluiceError) -> Void = { _ in }
    ) {
        self.onDiskFull = onDiskFull
        self.onStateDamage = onStateDamage
        self.staleBudget = staleBudget
        self.sink = sink
        self.checkpoint = checkpoint
        self.stateExecutor = stateExecutor
        self.checkpointCommits = checkpointCommits
        self.workers = workers
        self.recordsPerWrite = recordsPerWrite
        self.tally = tally
        self.meter = StageMeter(name: "upsert", workers: workers)
    }

    package func run(input: StageChannel<DocumentWork>, output: StageChannel<DocumentWork>) async {
        precondition(state == .initial, "a stage runs once")
        state = .running
        let meter = self.meter
        let step = Step(
            sink: sink,
            checkpoint: checkpoint,
            stateExecutor: stateExecutor,
            checkpointCommits: checkpointCommits,
            recordsPerWrite: recordsPerWrite,
            tally: tally,
            staleBudget: staleBudget,
            onDiskFull: onDiskFull,
            onStateDamage: onStateDamage
        )
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<workers {
                group.addTask {
                    let clock = ContinuousClock()
                    while true {
                        let waitStart = clock.now
                        // A cancelled task ends the worker as the end of the input does.
                        let documents = (try? await input.receiveBatch(max: 32)) ?? []
                        meter.starved(waitStart.duration(to: clock.now))
                        if documents.isEmpty { break }
                        meter.received(documents.count)
                        let workStart = clock.now
                        // Counted before the write, which releases the texts of what it wrote; a failed
                        // document's chunks are dropped (zero bytes), as they were when counted after it.
                        let sizes = documents.map { $0.chunks.reduce(0) { $0 + $1.chunk.text.utf8.count } }
                        let done = await step.write(documents)
                        let bytes = zip(done, sizes).reduce(0) { $0 + ($1.0.chunks.isEmpty ? 0 : $1.1) }
                        meter.worked(workStart.duration(to: clock.now), bytes: bytes, itemsOut: done.count)
                        for document in done {
                            let sendStart = clock.now
                            if (try? await output.send(document)) == true {
                                meter.blocked(sendStart.duration(to: clock.now))
                            }
                        }
                    }
                    output.finish()
                }
            }
        }
        state = .finished
    }

    private struct Step: Sendable {
        let sink: any VectorSink
        let checkpoint: CheckpointStore
        let stateExecutor: BlockingExecutor
        let checkpointCommits: CheckpointCommits
        let recordsPerWrite: Int
        let tally: RunTally
        let staleBudget: StaleDeletionBudget
        let onDiskFull: @Sendable (SluiceError) -> Void
        let onStateDamage: @Sendable (SluiceError) -> Void

        func write(_ documents: [DocumentWork]) async -> [DocumentWork] {
            var documents = documents
            await removeStaleVectorsOfFailedChanges(&documents)
            // Unchanged documents never carry pending ids: the extract step rewrites those.
            let writing = documents.indices.filter { !documents[$0].isSettled }
            guard !writing.isEmpty else { return documents }
            do {
                let pending = writing.map { (key: documents[$0].file.key, ids: documents[$0].chunks.map(\.id)) }
                if !pending.isEmpty {
                    try await checkpointCommits.write(.markPending(pending))
                }
                CrashPoint.reach("upsert.pending-recorded")
                for index in writing { documents[index].attemptedIDs = documents[index].chunks.map(\.id) }
                // The records of one sink write at a time (each with its metadata and encoding), not the
                // batch's all at once: the same writes, in the same order.
                var records: [VectorRecord] = []
                records.reserveCapacity(recordsPerWrite)
                var upserted = 0
                for index in writing {
                    let document = documents[index]
                    let part = RecordMetadata.documentPart(document)
                    for prepared in document.chunks {
                        records.append(Self.record(prepared, of: document, part: part))
                        if records.count == recordsPerWrite {
                            try await sink.upsert(records)
                            upserted += records.count
                            records.removeAll(keepingCapacity: true)
                        }
                    }
                }
                if !records.isEmpty {
                    try await sink.upsert(records)
                    upserted += records.count
                }
                records = []
                CrashPoint.reach("upsert.sink-written")
                var stale: [VectorID] = []
                var keys: [VectorID: String] = [:]
                for index in writing {
                    let fresh = Set(documents[index].chunks.map(\.id))
                    let old = (documents[index].previous?.knownIDs ?? []).union(documents[index].storedIDs)
                    let gone = old.subtracting(fresh)
                    stale += gone
                    for id in gone { keys[id] = documents[index].file.key }
                }
                if !stale.isEmpty {
                    try await sink.delete(stale.sorted(), documentKeys: keys)
                    CrashPoint.reach("upsert.replaced-vectors-deleted")
                }
                for index in writing { documents[index].settleUpserted() }
                let deleted = stale.count
                tally.update {
                    $0.vectorsUpserted += upserted
                    $0.vectorsDeleted += deleted
                }
            } catch {
                let reason = SluiceError.wrap(error, as: .sinkFailed)
                // A full disk is not the documents' fault: they are left for the next run (not failed).
                if reason.code == .diskFull { onDiskFull(reason) }
                for index in writing { documents[index].fail(reason, as: .sinkFailed) }
            }
            return documents
        }

        /// Deletes the indexed version's vectors of documents that changed and then failed, one sink call
        /// for the batch; on a sink error they are kept (the record still lists them for a later run).
        private func removeStaleVectorsOfFailedChanges(_ documents: inout [DocumentWork]) async {
            let failed = documents.indices.filter { documents[$0].hasKnownStaleVectors }
            guard !failed.isEmpty else { return }
            if staleBudget.needsBase {
                do {
                    let tracked = try await stateExecutor.run { [checkpoint] in
                        var count = 0
                        try checkpoint.forEachDocument { count += $0.knownIDs.count }
                        return count
                    }
                    staleBudget.start(tracked: tracked)
                } catch {
                    // An unreadable record stops the walk: the share cannot be known, so nothing is deleted,
                    // and the run stops with the error (as the scan does for a record it cannot read).
                    let reason = SluiceError.wrap(
                        error,
                        as: .state,
                        "counting the vectors the checkpoint tracks failed"
                    )
                    onStateDamage(reason)
                    for index in failed {
                        documents[index].staleVectorsKept =
                            "its old vectors were kept: the checkpoint could not be read (\(reason.code.rawValue))"
                    }
                    return
                }
            }
            var ids: [VectorID] = []
            var keys: [VectorID: String] = [:]
            var removing: [Int] = []
            for index in failed {
                let known = documents[index].previous?.knownIDs ?? []
                guard staleBudget.take(known.count) else {
                    documents[index].staleVectorsKept =
                        "its \(known.count) old vectors were kept: deleting them would pass run.max_delete_fraction (--allow-mass-delete)"
                    continue
                }
                removing.append(index)
                ids += known.sorted()
                for id in known { keys[id] = documents[index].file.key }
            }
            guard !ids.isEmpty else { return }
            do {
                // First the checkpoint stops claiming them, so that a crash before the commit below cannot
                // leave a record that says "indexed" over deleted vectors (a file restored to those bytes
                // would then be skipped).
                let marked = removing.map { documents[$0].file.key }
                try await stateExecutor.run { [checkpoint] in try checkpoint.markRemoving(marked) }
                try await sink.delete(ids, documentKeys: keys)
            } catch {
                for index in removing {
                    // Some may be gone (a deletion can fail half-way): the record keeps them all as pending,
                    // for the next attempt, and claims none.
                    if var previous = documents[index].previous {
                        previous.pendingIDs = previous.knownIDs.sorted()
                        previous.chunkIDs = []
                        documents[index].previous = previous
                    }
                    documents[index].staleVectorsKept =
                        "deleting its old vectors failed (\(SluiceError.wrap(error, as: .sinkFailed).message)); retried on the next run"
                }
                return
            }
            CrashPoint.reach("upsert.stale-vectors-deleted")
            for index in removing {
                documents[index].removedStaleVectors = documents[index].previous?.knownIDs.count ?? 0
            }
            let deleted = ids.count
            tally.update { $0.vectorsDeleted += deleted }
        }

        static func record(
            _ prepared: PreparedChunk,
            of document: DocumentWork,
            part: RecordMetadata.DocumentPart
        ) -> VectorRecord {
            VectorRecord(
                id: prepared.id,
                documentKey: document.file.key,
                ordinal: prepared.chunk.ordinal,
                text: prepared.chunk.text,
                vector: prepared.vector ?? [],
                metadata: RecordMetadata.build(chunk: prepared.chunk, document: document, part: part)
            )
        }
    }
}
