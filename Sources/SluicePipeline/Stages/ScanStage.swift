import Foundation
import SluiceCore
import SluiceState
import Synchronization

/// The first stage: lists the source (``DocumentSource``: a folder, a bucket) and sends each document to be processed into
/// the first channel.
///
/// - The stat-only fast path: a document whose size and modification time match its indexed record is
///   skipped here, without reading a byte (a bucket's object: its size and ETag, from the listing alone).
/// - With `retryFailed`, only documents whose record says failed are taken.
/// - Once a stop is requested (a signal, or the provider refusing to go on), no document is taken any
///   more; over a local folder the walk goes on, stat only, to count the documents not reached; a remote
///   source's walk (requests) stops.
/// - A record that cannot be read stops the walk (going on would overwrite it and forget its vectors).
package actor ScanStage {
    private enum State { case initial, running, finished }

    /// How the walk ended.
    package struct Outcome: Sendable {
        /// Whether a stop was requested while documents were still being taken.
        package var interrupted = false
        /// Documents seen after the stop, left for the next run.
        package var notReached = 0
    }

    package nonisolated let meter = StageMeter(name: "scan", workers: 1)
    /// Documents looked at so far (for progress and the scan phase's figures).
    package nonisolated let scanned = ScanCounter()
    private let source: any DocumentSource
    private let checkpoint: CheckpointStore
    private let retryFailed: Bool
    private let metadataRules: DocumentMetadataRules
    private let tally: RunTally
    private let stops: [ShutdownSignal]
    private var state = State.initial

    /// - Parameter stops: Signals that stop intake once any is requested.
    package init(
        source: any DocumentSource,
        checkpoint: CheckpointStore,
        retryFailed: Bool,
        tally: RunTally,
        stops: [ShutdownSignal],
        metadataRules: DocumentMetadataRules = .none
    ) {
        self.metadataRules = metadataRules
        self.source = source
        self.checkpoint = checkpoint
        self.retryFailed = retryFailed
        self.tally = tally
        self.stops = stops
    }

    /// Walks the source to its end, sending documents into `output`, and finishes `output` (also when it
    /// throws).
    /// - Throws: a walk that cannot start (the source folder is gone), or ``SluiceError/Code/stateCorrupt``
    ///   for a record that cannot be read.
    package func run(output: StageChannel<DocumentWork>) async throws -> Outcome {
        precondition(state == .initial, "a stage runs once")
        state = .running
        defer {
            scanned.complete()
            output.finish()
            state = .finished
        }
        // Count ahead for progress: a stat-only walk of its own, so that the total is known long before
        // this walk, held back by the stage buffers, reaches the end. Not with --retry-failed (only the
        // failed documents count there, which takes the checkpoint): its total comes with the end of the walk.
        let counter = scanned
        // A report of its own: the run's left-out count is the real walk's, not twice over. Not for a source
        // whose listing costs requests (a bucket): its total comes with the end of the walk.
        let countingSource = retryFailed ? nil : source.countingCopy()
        let counting: Task<Void, Never>? = countingSource.map { countingScanner in
            Task.detached(priority: .utility) {
                var count = 0
                do {
                    try await countingScanner.walk { _ in
                        count += 1
                        return !Task.isCancelled
                    }
                } catch {
                    return  // the walk below meets the same problem and reports it
                }
                if !Task.isCancelled { counter.counted(count) }
            }
        }
        defer { counting?.cancel() }
        let clock = ContinuousClock()
        var outcome = Outcome()
        var stateDamage: SluiceError?
        try await source.walk { entry in
            if stops.contains(where: \.isRequested) {
                // Stop taking documents; keep walking (stat only) to count what was not reached — on a local
                // folder. A remote source's walk is requests (conditional GETs, listing pages: minutes for a
                // large site or bucket, after the signal): it stops here, and what it did not list is not counted.
                outcome.interrupted = true
                if !source.readsLocally {
                    if case .success = entry { outcome.notReached += 1 }
                    return false
                }
                if case .success(let file) = entry {
                    if retryFailed {
                        // Only failed documents count as not reached here.
                        switch RecordRead(file.key, in: checkpoint) {
                        case .found(let previous): if previous?.status != .failed { return true }
                        case .damaged(let error):
                            stateDamage = error
                            return false
                        case .failed: break
                        }
                    }
                    outcome.notReached += 1
                }
                return true
            }
            let scanStart = clock.now
            var document: DocumentWork
            read: switch entry {
            case .failure(let problem):
                let file = SourceFile(
                    key: problem.key,
                    url: source.location(of: problem.key),
                    size: 0,
                    mtimeNanoseconds: 0
                )
                // Its record lists the vectors of the version indexed before, which the failure keeps.
                var previous: DocumentRecord?
                switch RecordRead(problem.key, in: checkpoint) {
                case .found(let record): previous = record
                case .damaged(let error):
                    stateDamage = error
                    return false
                case .failed: previous = nil
                }
                document = DocumentWork(file: file, previous: previous)
                document.outcome = .failed(SluiceError(problem.error, problem.message))
            case .success(let file):
                let previous: DocumentRecord?
                switch RecordRead(file.key, in: checkpoint) {
                case .found(let record): previous = record
                case .damaged(let error):
                    stateDamage = error
                    return false
                case .failed(let error):
                    document = DocumentWork(file: file, previous: nil)
                    document.fail(error, as: .state)
                    break read  // the document goes on, failed
                }
                if retryFailed && previous?.status != .failed { return true }
                let fileMetadata = metadataRules.metadata(
                    key: file.key,
                    size: file.size,
                    mtimeNanoseconds: file.mtimeNanoseconds
                )
                // Under the settings of the extractor that read the bytes last: unchanged bytes are read by it again.
                let metadataHash = metadataRules.fingerprint(of: fileMetadata, read: previous?.extractor)
                let knownFailureKey = metadataRules.knownFailureKey(read: previous?.extractor)
                if !retryFailed, let previous, previous.status == .failed, previous.knownFailure == knownFailureKey,
                    file.hasSameListing(as: previous), previous.pendingIDs.isEmpty
                {
                    // A known failure (docs/DESIGN.md §11): the same file under the same settings fails the
                    // same way; it stays listed by `status` and is skipped without reading a byte.
                    tally.update {
                        $0.documentsSkipped += 1
                        $0.documentsKnownFailures = ($0.documentsKnownFailures ?? 0) + 1
                    }
                    scanned.increment()
                    meter.worked(scanStart.duration(to: clock.now), itemsOut: 0)
                    return true
                }
                if let previous, previous.status == .indexed, file.hasSameListing(as: previous),
                    previous.pendingIDs.isEmpty, previous.metadataHash == metadataHash
                {
                    // The stat-only fast path: unchanged without reading a byte.
                    tally.update { $0.documentsSkipped += 1 }
                    scanned.increment()
                    meter.worked(scanStart.duration(to: clock.now), itemsOut: 0)
                    return true
                }
                document = DocumentWork(file: file, previous: previous)
                document.fileMetadata = fileMetadata
                document.metadataHash = metadataHash
                document.knownFailureKey = knownFailureKey
                document.extractor = previous?.extractor
                document.metadataRules = metadataRules
                document.skipsKnownFailures = !retryFailed
                document.frontMatter = metadataRules.frontMatter
            }
            scanned.increment()
            tally.admitted()
            meter.worked(scanStart.duration(to: clock.now))
            let sendStart = clock.now
            // A cancelled run stops walking.
            guard let waited = try? await output.send(document) else { return false }
            if waited { meter.blocked(sendStart.duration(to: clock.now)) }
            return true
        }
        if let stateDamage { throw stateDamage }
        return outcome
    }
}

/// Documents the scanner has looked at so far (for progress), what the counting walk found, and
/// whether the walk is over.
package final class ScanCounter: Sendable {
    private let count = Atomic<Int>(0)
    private let ahead = Atomic<Int>(-1)
    private let completed = Atomic<Bool>(false)
    func increment() { count.add(1, ordering: .relaxed) }
    /// The counting walk found `documents`.
    func counted(_ documents: Int) { ahead.store(documents, ordering: .relaxed) }
    /// The walk is over: ``value`` is the run's number of documents from now on.
    func complete() { completed.store(true, ordering: .releasing) }
    package var value: Int { count.load(ordering: .relaxed) }
    /// The documents of the run: exact once the walk is over; before, what the counting walk found
    /// (never less than what was scanned: files may come and go between the two walks); nil while
    /// neither is known.
    package var total: Int? {
        if completed.load(ordering: .acquiring) { return value }
        let counted = ahead.load(ordering: .relaxed)
        return counted < 0 ? nil : max(counted, value)
    }
}
