import SluiceCore
import SluiceState

/// A chunk on its way to the sink: its hash, its vector id and (once known) its vector.
package struct PreparedChunk: Sendable {
    package var chunk: Chunk
    /// The hash of what the embedder is sent (``embedPrefix`` and the chunk's text, normalized): the key of
    /// the embedding cache and of deduplication in flight. Without a prefix, the chunk's own ``Chunk/hash``.
    package var hash: ContentHash
    package var id: VectorID
    package var vector: [Float]?
    /// What `chunk.context` puts before the chunk's text in the embedder's input (``ChunkContext``); empty
    /// for none. Never stored: the records keep the chunk's own text.
    package var embedPrefix = ""
    /// The prefix's size in the embedder's tokens.
    package var embedPrefixTokens = 0

    package init(chunk: Chunk, hash: ContentHash, id: VectorID, vector: [Float]? = nil) {
        self.chunk = chunk
        self.hash = hash
        self.id = id
        self.vector = vector
    }

    /// What the embedder is sent: the prefix, then the chunk's text.
    package var embedText: String { embedPrefix.isEmpty ? chunk.text : embedPrefix + chunk.text }
    /// Its size in the embedder's tokens.
    package var embedTokens: Int { embedPrefixTokens + chunk.tokenCount }
}

/// One document as it moves through the stages. Stages pass a document with a final outcome straight
/// through to the commit stage, so every document reaches the checkpoint exactly once.
package struct DocumentWork: Sendable {
    package enum Outcome: Sendable {
        /// Still being processed.
        case pending
        /// Its bytes hash to what is already indexed: nothing to do but refresh size/mtime.
        case unchanged
        /// Its bytes are those of a known (permanent) failure under the same settings: skipped, the
        /// failure kept (docs/DESIGN.md §11).
        case knownFailure
        /// Failed with a reason; the document is retried on the next run.
        case failed(SluiceError)
        /// Every chunk is acknowledged by the sink.
        case upserted
    }

    package var file: SourceFile
    package var previous: DocumentRecord?
    package var contentHash: ContentHash?
    package var text: ExtractedText?
    /// The extractor's document-level metadata (format, title, author, …), kept for the stored records.
    package var documentMetadata: [String: String] = [:]
    /// Metadata from outside the bytes (``DocumentMetadataRules``) and its fingerprint.
    package var fileMetadata: [String: MetadataValue] = [:]
    package var metadataHash: ContentHash?
    /// Whether Markdown front matter becomes metadata (`source.front_matter`).
    package var frontMatter = true
    /// The key a permanent failure of this document is recorded under (``DocumentMetadataRules``).
    package var knownFailureKey: ContentHash?
    /// The extractor whose settings ``metadataHash`` and ``knownFailureKey`` cover (see
    /// ``DocumentRecord/extractor``): the previous record's until an extractor is chosen for the bytes.
    package var extractor: String?
    /// The rules the fingerprints were made with (nil: none were made).
    package var metadataRules: DocumentMetadataRules?
    /// Skip the document if it is a known failure (false under `--retry-failed`).
    package var skipsKnownFailures = true
    /// The chunker's output, until the hash stage turns it into ``chunks``.
    package var chunked: [Chunk] = []
    package var chunks: [PreparedChunk] = []
    package var outcome: Outcome = .pending
    /// Vectors of the indexed version deleted because this changed version failed.
    package var removedStaleVectors = 0
    /// Why the vectors of the indexed version were kept although this changed version failed.
    package var staleVectorsKept: String?
    /// Ids recorded as pending before an upsert attempt (kept on failure so they are cleaned up later).
    package var attemptedIDs: [VectorID] = []
    /// The ids the store held for this document when a new or lost state read them back
    /// (``StoreAdoption``): those that are not its chunks' ids now are deleted once its new vectors are
    /// written, as a changed document's old ones are.
    package var storedIDs: Set<VectorID> = []

    package init(file: SourceFile, previous: DocumentRecord?) {
        self.file = file
        self.previous = previous
    }

    /// The bytes are read by the extractor named `name`: the fingerprints now cover the settings that
    /// shape chunks which it reads (docs/DESIGN.md §12), as the record will say.
    package mutating func read(by name: String) {
        guard let rules = metadataRules, name != extractor else { return }
        let hash = rules.fingerprint(of: fileMetadata, read: name)
        extractor = name
        metadataHash = hash
        knownFailureKey = rules.knownFailureKey(read: name)
    }

    /// Failed because the run was stopped — the provider refused to go on (quota, credentials), or the
    /// shutdown signal cut a wait short (``SluiceError/Code/interrupted``) — not the document's fault: it
    /// is left as it was, as if not reached, for the next run.
    package var wasStopped: Bool {
        if case .failed(let error) = outcome {
            return [.providerRefused, .interrupted, .diskFull].contains(error.code)
        }
        return false
    }

    /// Failed after its bytes were read and found to differ from the indexed version's: the vectors the
    /// sink holds for that version are known stale (docs/DESIGN.md §4). Not when the bytes could not be read (not
    /// known to have changed), nor when the sink or the provider failed (not the document's fault; the
    /// refused or interrupted document is left as it was).
    package var hasKnownStaleVectors: Bool {
        guard case .failed(let error) = outcome, error.code != .sinkFailed, !wasStopped,
            let hash = contentHash, let previous, let indexed = previous.contentHash, indexed != hash
        else { return false }
        return !previous.knownIDs.isEmpty
    }

    package var isSettled: Bool {
        if case .pending = outcome { return false }
        return true
    }

    /// Every chunk is acknowledged by the sink: the outcome becomes ``Outcome/upserted``, and the chunks keep
    /// only what the commit stage records (their ids and hashes). Their vectors, texts, headings and metadata
    /// are released here rather than when the commit stage is done with the document: documents wait in the
    /// commit stage's input and its group commits, and what they held there was the part of the load's peak
    /// that grew with the corpus's share of cached chunks (docs/BENCHMARKS.md, "What grows in the heap from
    /// 1× to 10×").
    package mutating func settleUpserted() {
        outcome = .upserted
        text = nil
        chunked = []
        for index in chunks.indices {
            chunks[index].vector = nil
            chunks[index].embedPrefix = ""
            chunks[index].chunk.text = ""
            chunks[index].chunk.headingPath = []
            chunks[index].chunk.metadata = [:]
        }
    }

    package mutating func fail(_ error: any Error, as code: SluiceError.Code) {
        outcome = .failed(SluiceError.wrap(error, as: code))
        text = nil
        chunked = []
        chunks = []
    }
}
