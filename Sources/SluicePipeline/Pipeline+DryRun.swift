import Foundation
import SluiceCore
import SluiceExtract
import SluiceState

/// What a run would do, without extracting, embedding or writing anything.
public struct DryRunReport: Sendable, Hashable, Codable {
    public var added: [String] = []
    public var changed: [String] = []
    public var retried: [String] = []
    /// Same bytes, other metadata (the pipeline's values, the file's mtime): records written again, their
    /// vectors from the embedding cache.
    public var metadataChanged: [String] = []
    public var unchanged = 0
    /// Known failures (docs/DESIGN.md §11): skipped until the file or the settings change.
    public var knownFailures = 0
    public var deleted: [String] = []
    public var vectorsToDelete = 0
    /// Vectors this state tracks (the base of the mass-delete share).
    public var storedVectors = 0
    /// Set when the deletions would trip the mass-delete guard.
    public var massDeleteRefusal: String?
    /// The settings that shape chunks which changed since the last run (`chunk.context none → headings`,
    /// ``ShapingSettings/changes(from:)``): why documents are listed as ``metadataChanged``.
    public var shapingChanges: [String] = []
    /// Whether one of those changes what the embedder is sent (`chunk.context`): the documents' chunks are
    /// then embedded again, not taken from the embedding cache.
    public var shapingChangesEmbed: Bool { shapingChanges.contains { $0.hasPrefix("chunk.context ") } }
    /// What the documents to add, change, retry or write again would cost the embedder, estimated from the
    /// extraction cache (nil when there is no state yet: nothing is cached).
    public var cost: DryRunCost?

    public init() {}
}

extension Pipeline {
    /// Compares the source with the checkpoint: new, changed (bytes differ), previously failed, unchanged,
    /// and (with prune) vanished documents. Reads files only when size or mtime differ, and only from a
    /// folder: a remote source's entry whose size or change token (ETag) differs is reported changed, since
    /// telling a touched object from a changed one would cost a download.
    /// Makes the same cheap dependency checks as ``run(shutdown:progress:stopped:)`` first (exit 6 when the store or
    /// the embedder cannot be reached).
    /// - Parameter earlier: what the dry run of the generation the same run builds before this one counts
    ///   as embedded (``DryRunEmbedded``): cached by then.
    public func dryRun(after earlier: DryRunEmbedded = DryRunEmbedded()) async throws -> DryRunReport {
        try await checkDependencies()
        var report = DryRunReport()
        // No state yet: everything is new. A state that is there but cannot be opened (damaged, locked
        // out) is the run's error too, never taken for none.
        guard CheckpointStore.exists(at: stateDirectory) else {
            let source = try makeSource(preview: true)
            try source.prepare()
            try await source.walk { entry in
                if case .success(let file) = entry { report.added.append(file.key) }
                return true
            }
            return report
        }
        let state = try CheckpointStore(directory: stateDirectory, readOnly: true)
        guard try state.hasRecords(ofGeneration: configuration.generation) else {
            // A candidate generation before its first run: every document is added; the caches (extractions,
            // embeddings) are the state's, shared by every generation.
            let source = try makeSource(preview: true)
            try source.prepare()
            var files: [SourceFile] = []
            try await source.walk { entry in
                if case .success(let file) = entry {
                    report.added.append(file.key)
                    files.append(file)
                }
                return true
            }
            report.cost = try await estimateCost(
                of: files,
                readsLocally: source.readsLocally,
                checkpoint: state,
                after: earlier,
                on: BlockingExecutor(label: "sl-dry-run", threads: 1)
            )
            return report
        }
        let checkpoint = try state.viewing(generation: configuration.generation)
        try guardShard(checkpoint: checkpoint)
        // What the run would refuse, the dry run refuses (with --reembed everything is embedded again).
        if !options.reembed {
            try refuseEmbedderChange(
                components.embedder.identity,
                stored: try checkpoint.metadata("embedder"),
                checkpoint: checkpoint
            )
        }
        if let stored = try checkpoint.metadata("shaping"), try checkpoint.documentCount() > 0 {
            let shaping = ShapingSettings(configuration, extractors: components.extractors.extractors)
            let previous = ShapingSettings(text: stored)
            // Refused as the run refuses it: a generation's chunks are never re-shaped in place.
            if previous != shaping, let generation = configuration.generation {
                throw Self.shapingChangeRefused(generation: generation, changes: shaping.changes(from: previous))
            }
            report.shapingChanges = shaping.changes(from: previous)
        }
        let source = try makeSource(preview: true)
        try source.prepare()
        source.recall { key in try? checkpoint.document(key) }
        let readsLocally = source.readsLocally
        // The documents the run would write, for the cost estimate.
        var toWrite: [SourceFile] = []
        let rules = DocumentMetadataRules(configuration: configuration, extractors: components.extractors.extractors)
        // Records are read as the run's scan reads them: one that cannot be read stops the walk with the
        // checkpoint's error (state-corrupt), as it stops the run.
        var damage: SluiceError?
        try await source.walk { entry in
            guard case .success(let file) = entry else { return true }
            let recorded: DocumentRecord?
            switch RecordRead(file.key, in: checkpoint) {
            case .found(let record): recorded = record
            case .damaged(let error):
                damage = error
                return false
            case .failed(let error):
                damage = SluiceError.wrap(error, as: .state)
                return false
            }
            guard let previous = recorded else {
                if !options.retryFailed {
                    report.added.append(file.key)
                    toWrite.append(file)
                }
                return true
            }
            // As the scan makes it: under the settings of the extractor that read the bytes last.
            let metadataHash = rules.fingerprint(
                of: rules.metadata(
                    key: file.key,
                    size: file.size,
                    mtimeNanoseconds: file.mtimeNanoseconds
                ),
                read: previous.extractor
            )
            let sameFile = {
                file.hasSameListing(as: previous)
                    || (readsLocally
                        && (try? file.open().readAll()).map({ ContentHash(of: $0) == previous.failedHash }) == true)
            }
            if previous.status == .failed, !options.retryFailed, previous.knownFailure != nil,
                previous.knownFailure == rules.knownFailureKey(read: previous.extractor),
                previous.pendingIDs.isEmpty, sameFile()
            {
                report.knownFailures += 1
            } else if previous.status == .failed {
                report.retried.append(file.key)
                toWrite.append(file)
            } else if options.retryFailed {
                return true  // --retry-failed takes only the failed documents
            } else if file.hasSameListing(as: previous), previous.pendingIDs.isEmpty,
                previous.metadataHash == metadataHash
            {
                report.unchanged += 1
            } else if previous.pendingIDs.isEmpty, readsLocally, let bytes = try? file.open().readAll(),
                ContentHash(of: bytes) == previous.contentHash
            {
                if previous.metadataHash == metadataHash {
                    report.unchanged += 1
                } else {
                    report.metadataChanged.append(file.key)
                    toWrite.append(file)
                }
            } else {
                report.changed.append(file.key)
                toWrite.append(file)
            }
            return true
        }
        if let damage { throw damage }
        report.cost = try await estimateCost(
            of: toWrite,
            readsLocally: readsLocally,
            checkpoint: checkpoint,
            after: earlier,
            on: BlockingExecutor(label: "sl-dry-run", threads: 1)
        )
        if options.prune ?? configuration.run.prune {
            let plan = try planPrune(listing: try await source.completeListing(), checkpoint: checkpoint)
            report.deleted = plan.keys
            report.vectorsToDelete = plan.ids.count
            report.storedVectors = plan.known
            do {
                try checkMassDelete(deleting: plan.ids.count, documents: plan.keys.count, stored: report.storedVectors)
            } catch let error as SluiceError {
                report.massDeleteRefusal = error.message
            }
        }
        return report
    }
}
