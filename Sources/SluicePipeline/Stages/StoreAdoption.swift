import Logging
import SluiceCore
import SluiceState
import Synchronization

/// A new or lost state adopts the vectors the store already holds (docs/OPERATIONS.md, "A lost state,
/// re-sharding"), document by document, after the hash step and on its workers.
///
/// For a document this state never committed, the store's vectors of that document
/// (``VectorSink/storedVectors(ofDocument:)``) whose ids are the document's chunks' ids now go into the
/// embedding cache: an id is derived from the key, the ordinal and the hash of what the embedder is sent
/// (``VectorID``), and the store's embedder identity is the pipeline's (``VectorSink/prepare(embedder:)``),
/// so such a vector is the one the embedder would return. The embed stage then finds them cached and
/// sends nothing for unchanged text. The store's other ids of the document (a changed document's old
/// chunks) are deleted after its new vectors are written (``DocumentWork/storedIDs``).
///
/// Nothing else changes: the document takes the ordinary path (upsert, commit), its records written
/// again with the same vectors, so the store ends as an uninterrupted run leaves it, and a kill at any
/// point leaves only what the next run redoes (the cache is a cache; the document is not committed).
/// A shard asks only for the documents it owns.
package final class StoreAdoption: Sendable {
    private let sink: any VectorSink
    private let checkpoint: CheckpointStore
    private let stateExecutor: BlockingExecutor
    private let embedder: EmbedderIdentity
    private let tally: RunTally
    private let logger: Logger
    /// Set once the store answered that it cannot read vectors back: the run stops asking.
    private let unsupported = Mutex(false)
    /// The store's ``VectorSink/readNotice`` said last: a record the adoption could not read is not adopted
    /// (its chunk is embedded again), and the run says so once each time the list grows.
    private let notice = Mutex<String?>(nil)

    package init(
        sink: any VectorSink,
        checkpoint: CheckpointStore,
        stateExecutor: BlockingExecutor,
        embedder: EmbedderIdentity,
        tally: RunTally,
        logger: Logger
    ) {
        self.sink = sink
        self.checkpoint = checkpoint
        self.stateExecutor = stateExecutor
        self.embedder = embedder
        self.tally = tally
        self.logger = logger
    }

    package func callAsFunction(_ document: DocumentWork) async -> DocumentWork {
        var document = document
        // A document this state committed has its vectors' inputs in the cache already.
        guard !document.isSettled, document.previous?.chunkIDs.isEmpty ?? true, !unsupported.withLock({ $0 })
        else { return document }
        let stored: [VectorID: [Float]]
        do {
            guard let answer = try await sink.storedVectors(ofDocument: document.file.key) else {
                let first = unsupported.withLock { flag in
                    let first = !flag
                    flag = true
                    return first
                }
                if first {
                    let reason = sink.readBackRefusal ?? "cannot read vectors back"
                    logger.notice(
                        "\(sink.name): \(reason): this new state embeds its documents again (docs/OPERATIONS.md)"
                    )
                }
                return document
            }
            stored = answer
            reportSkipped()
        } catch {
            // Not the document's fault, but embedding it instead would pay for what the store may hold.
            document.fail(error, as: .sinkFailed)
            return document
        }
        guard !stored.isEmpty else { return document }
        var entries: [(ContentHash, [Float])] = []
        for chunk in document.chunks {
            guard let vector = stored[chunk.id],
                case .success(let usable) = EmbedStage.check(vector, dimensions: embedder.dimensions)
            else { continue }
            entries.append((chunk.hash, usable))
        }
        document.storedIDs = Set(stored.keys)
        if !entries.isEmpty {
            let (checkpoint, embedder) = (self.checkpoint, self.embedder)
            do {
                try await stateExecutor.run { [entries] in try checkpoint.cacheEmbeddings(entries, embedder: embedder) }
            } catch {
                document.fail(error, as: .state)
                return document
            }
        }
        // The fault campaign's point inside an adoption: vectors cached, the document not yet written again.
        CrashPoint.reach("adopt.cached")
        let adopted = entries.count
        tally.update { $0.vectorsAdopted = ($0.vectorsAdopted ?? 0) + adopted }
        return document
    }

    /// Logs the store's records the adoption skipped because they do not decode, when that changed.
    private func reportSkipped() {
        guard let current = sink.readNotice else { return }
        let changed = notice.withLock { last in
            guard last != current else { return false }
            last = current
            return true
        }
        if changed {
            logger.warning("\(sink.name): \(current) (such a record is not adopted: its chunk is embedded again)")
        }
    }
}
