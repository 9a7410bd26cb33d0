import Foundation
import Logging
import SluiceCore
import SluiceState

/// The last stage: writes each document's outcome to the checkpoint, many documents per LMDB
/// transaction (group commit: the documents waiting in its input, and the other stages' state writes
/// waiting with them, ``CheckpointCommits``), and counts outcomes. A document is marked indexed only here, after the
/// sink acknowledged all its chunks.
package actor CommitStage {
    private enum State { case initial, running, finished }

    package nonisolated let meter: StageMeter
    private let checkpointCommits: CheckpointCommits
    private let tally: RunTally
    private let logger: Logger
    private var state = State.initial

    package init(checkpointCommits: CheckpointCommits, tally: RunTally, logger: Logger) {
        self.checkpointCommits = checkpointCommits
        self.tally = tally
        self.logger = logger
        self.meter = StageMeter(name: "commit", workers: 1)
    }

    package func run(input: StageChannel<DocumentWork>) async throws {
        precondition(state == .initial, "a stage runs once")
        state = .running
        let clock = ContinuousClock()
        var firstError: (any Error)?
        while true {
            let waitStart = clock.now
            let documents = try await input.receiveBatch(max: 256)
            meter.starved(waitStart.duration(to: clock.now))
            if documents.isEmpty { break }
            meter.received(documents.count)
            let workStart = clock.now
            let now = Date().timeIntervalSince1970
            // A document stopped by the run's end (the provider refused its embedding, or a signal cut a
            // wait) is left as it was: the next run (once the quota or key is fixed) takes it up as if it
            // had not been reached.
            let stopped = documents.filter(\.wasStopped).count
            let records = documents.filter { !$0.wasStopped }.map { Self.record(for: $0, now: now) }
            do {
                try await checkpointCommits.write(.commit(put: records, delete: []))
                CrashPoint.reach("commit.committed")
            } catch {
                // Keep draining so that no stage waits forever on a full buffer; report at the end. The
                // documents stay uncommitted and are redone by the next run.
                logger.error("checkpoint commit failed", metadata: ["sluice-error": "\(error)"])
                firstError = firstError ?? error
                tally.settled(documents.count)
                continue
            }
            tally.settled(documents.count)
            tally.update { stats in
                stats.documentsNotReached += stopped
                for document in documents where !document.wasStopped {
                    switch document.outcome {
                    case .upserted: stats.documentsUpserted += 1
                    case .unchanged: stats.documentsSkipped += 1
                    case .knownFailure:
                        stats.documentsSkipped += 1
                        stats.documentsKnownFailures = (stats.documentsKnownFailures ?? 0) + 1
                    case .failed(let error):
                        stats.documentsFailed += 1
                        stats.failuresByCode[error.code.rawValue, default: 0] += 1
                    case .pending: preconditionFailure("a document reached the commit stage unsettled")
                    }
                }
            }
            for document in documents where !document.wasStopped {
                if case .failed(let error) = document.outcome {
                    logger.warning(
                        "document failed",
                        metadata: ["sluice-document": "\(document.file.key)", "sluice-reason": "\(error.description)"]
                    )
                }
            }
            meter.worked(workStart.duration(to: clock.now), itemsOut: documents.count)
        }
        state = .finished
        if let firstError { throw firstError }
    }

    /// The checkpoint record for a document's outcome.
    static func record(for document: DocumentWork, now: Double) -> DocumentRecord {
        let previous = document.previous
        switch document.outcome {
        case .upserted:
            var record = DocumentRecord(
                key: document.file.key,
                status: .indexed,
                contentHash: document.contentHash,
                size: document.file.size,
                mtimeNanoseconds: document.file.mtimeNanoseconds,
                chunkIDs: document.chunks.map(\.id),
                pendingIDs: [],
                error: nil,
                attempts: 0,
                updatedAt: now,
                metadataHash: document.metadataHash
            )
            record.changeToken = document.file.changeToken
            record.extractor = document.extractor
            return record
        case .unchanged, .knownFailure:
            var record = previous!
            record.size = document.file.size
            record.mtimeNanoseconds = document.file.mtimeNanoseconds
            record.changeToken = document.file.changeToken
            record.pendingIDs = []
            record.updatedAt = now
            return record
        case .failed(let error):
            // Keep what the sink holds (old chunk ids and their hash) so stale deletion stays exact; unless
            // the upsert stage deleted them (a changed version that failed).
            var record =
                previous
                ?? DocumentRecord(
                    key: document.file.key,
                    status: .failed,
                    contentHash: nil,
                    size: document.file.size,
                    mtimeNanoseconds: 0
                )
            record.status = .failed
            record.mtimeNanoseconds = document.file.mtimeNanoseconds
            record.changeToken = document.file.changeToken
            record.size = document.file.size
            record.pendingIDs = Array(Set(record.pendingIDs).union(document.attemptedIDs)).sorted()
            record.error = .init(
                code: error.code.rawValue,
                message: error.message + (document.staleVectorsKept.map { "; \($0)" } ?? "")
            )
            record.failedHash = document.contentHash
            if document.removedStaleVectors > 0 {
                // The changed version failed and the old version's vectors were deleted (acknowledged):
                // nothing of this document is in the sink any more.
                record.contentHash = nil
                record.chunkIDs = []
                record.pendingIDs = document.attemptedIDs
                record.removedVectors = document.removedStaleVectors
            }
            // A permanent failure is known under its key: not retried until the file or the settings change.
            // Not while the record still claims vectors (an old version's, kept by the mass-delete guard or a
            // sink error): the next run must retry their deletion.
            let claimsNothing = record.chunkIDs.isEmpty && record.pendingIDs.isEmpty
            record.knownFailure =
                error.code.isPermanent && document.contentHash != nil && claimsNothing ? document.knownFailureKey : nil
            // The scope of the known failure's key (a failed record's metadata fingerprint is not compared).
            record.extractor = document.extractor
            record.attempts += 1
            record.updatedAt = now
            return record
        case .pending:
            preconditionFailure("unsettled document")
        }
    }
}
