import Foundation
import SluiceCore
import SluiceLMDB
import Synchronization

/// Training the IVF index (docs/LOCAL_INDEX.md, "Training" and "Retraining rule") on the trainer's thread
/// (``LocalIVFTrainer``), while the writer goes on writing and readers go on searching:
///
/// - Before each write the writer only looks (one read transaction) whether the index needs work, and asks the
///   trainer for a job when it does.
/// - Below `sink.ivf.exact_below` vectors nothing is trained (searches scan). A job that finds the store at
///   that size samples the stored vectors in one read transaction (a snapshot), trains nlist = 2√n centroids
///   (``LocalIVFTraining``) outside any write transaction, records them as a new epoch `building` in one
///   commit, then fills its lists from snapshots in bounded commits (`LocalSink+IVFFilling.swift`); the last
///   commit makes it `current`. Meanwhile every write keeps the epoch in training up to date as well, and the
///   filling skips labels already in it, so the writer's own writes and shards writing the same store stay
///   consistent; searches use the old epoch, or scan.
/// - A `kill -9` during training leaves the epoch `building`, never `current`; the next writer with `ivf` asks
///   for a job that goes on filling it from its progress.
/// - When the store holds ``LocalIVFTraining/retrainGrowth`` times the vectors the current epoch was trained
///   on, a new epoch is trained the same way while searches use the old one; the commit that makes it
///   `current` retires the old one, whose entries the trainer then deletes in bounded commits.
extension LocalSink {
    /// On the writer's thread before a write: asks the trainer for a job when the IVF index needs one (to
    /// train, to go on filling an epoch, to delete a retired one). A failed job is not tried again by this
    /// process (searches scan, or use the current epoch, which every write keeps up to date).
    func ensureIVF() throws {
        guard ivfIndexed, !ivfState.trainingFailed else { return }
        guard try nextIVFWork() != nil || hasRetiredIVFEpochs() else { return }
        ivfState.trainer.request { self.runIVFJob() }
    }

    /// Waits until the trainer's job (if any) has ended, and throws the error of one that failed since the
    /// last call. Never call it on the store's writer thread while a write waits.
    package func waitForIVFTraining() async throws {
        let trainer = ivfState.trainer
        try await readers.run { trainer.settle() }
        if let failure = trainer.takeFailure() { throw failure }
    }

    /// Whether the trainer works (or is about to) in this process.
    package var ivfTrainingRuns: Bool { ivfState.trainer.isBusy }

    /// What the trainer did since the store was opened: its commits, their longest, its computing time.
    package var ivfTrainerCounts: LocalIVFTrainerCounts { ivfState.trainer.report }

    /// The work the index needs: an epoch to go on filling, or a store to train (its size), else nil.
    enum IVFWork: Equatable {
        case fill(UInt32)
        case train(vectors: Int)
    }

    func nextIVFWork() throws -> IVFWork? {
        let (ivf, vectors) = (try environment.database(LocalIVFLayout.database), try environment.database("vectors"))
        let (count, current, building) = try environment.read { txn in
            (
                try txn.count(vectors),
                try txn.get(ivf, LocalIVFLayout.current).map { LocalIVFLayout.uint32($0) },
                try txn.get(ivf, LocalIVFLayout.building).map { LocalIVFLayout.uint32($0) }
            )
        }
        if let building { return .fill(building) }
        guard count > 0, count >= indexSettings.exactBelow else { return nil }
        if let current, let epoch = try environment.read({ try ivfEpoch(current, $0) }),
            count < LocalIVFTraining.retrainGrowth * max(1, epoch.trainedOn)
        {
            return nil
        }
        return .train(vectors: count)
    }

    /// One job on the trainer's thread: deletes retired epochs, trains or goes on filling, deletes what that
    /// retired. A failure is kept for ``waitForIVFTraining()`` and not tried again by this process.
    private func runIVFJob() {
        let trainer = ivfState.trainer
        do {
            try deleteRetiredIVFEpochs()
            switch try nextIVFWork() {
            case .fill(let number): try fillIVF(number)
            case .train(let vectors): try trainIVF(vectors: vectors)
            case nil: break
            }
            try deleteRetiredIVFEpochs()
        } catch {
            ivfState.trainingFailed = true
            trainer.failed(error)
        }
    }

    /// One write transaction of the trainer: excluded from the store's opens in this process (as a keyword
    /// merge is, ``KeywordMerger/openGate``), counted and timed.
    func ivfTrainerWrite<T: Sendable>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        try KeywordMerger.openGate.withLock { _ in
            try ivfState.trainer.commit { try environment.write(body) }
        }
    }

    /// Trains a new epoch on a snapshot of the store (which held `vectors` vectors when the job looked) and
    /// fills its lists.
    private func trainIVF(vectors: Int) throws {
        let trainer = ivfState.trainer
        let ivf = try environment.database(LocalIVFLayout.database)
        if try environment.read({ try $0.get(ivf, LocalIVFLayout.labels) }) == nil {
            try relabelForIVF()
            // Stopped, or a write with `exact` came between two of its commits: the next job labels anew.
            guard try environment.read({ try $0.get(ivf, LocalIVFLayout.labels) }) != nil else { return }
        }
        guard let dimensions = try firstVectorDimensions(), dimensions > 0 else { return }
        let (centroids, count) = try ivfCentroids(vectors: vectors, dimensions: dimensions)
        guard !centroids.isEmpty else { return }
        trainer.reach(.trained)
        CrashPoint.reach("local.ivf-trained")
        let number: UInt32? = try ivfTrainerWrite { txn in
            // Another process sharing the store began one meanwhile: fill that one instead.
            if let other = try txn.get(ivf, LocalIVFLayout.building) { return LocalIVFLayout.uint32(other) }
            // A write with another index dropped the labels, or another process trained meanwhile.
            guard try txn.get(ivf, LocalIVFLayout.labels) != nil else { return nil }
            if let current = try txn.get(ivf, LocalIVFLayout.current).map({ LocalIVFLayout.uint32($0) }),
                let epoch = try ivfEpoch(current, txn), epoch.trainedOn >= count
            {
                return nil
            }
            let number = try txn.get(ivf, LocalIVFLayout.nextEpoch).map { LocalIVFLayout.uint32($0) } ?? 1
            try txn.put(ivf, LocalIVFLayout.nextEpoch, LocalIVFLayout.bigEndian(number + 1))
            let epoch = LocalIVFEpoch(epoch: number, dimensions: dimensions, trainedOn: count, centroids: centroids)
            try txn.put(ivf, LocalIVFLayout.centroidsKey(number), epoch.encoded)
            try txn.put(ivf, LocalIVFLayout.progressKey(number), Self.bytes(0))
            try txn.put(ivf, LocalIVFLayout.building, LocalIVFLayout.bigEndian(number))
            return number
        }
        guard let number else { return }
        trainer.trained()
        CrashPoint.reach("local.ivf-training-begun")
        try fillIVF(number)
    }

    /// The centroids of a new epoch for a store that held `vectors` vectors of `dimensions` when the job looked
    /// (empty: none, or the trainer stops), and the number of vectors the sampled snapshot held. The sample
    /// (labels; k-means reads their vectors from the store) lives only here: it is let go before the lists
    /// are filled.
    private func ivfCentroids(vectors: Int, dimensions: Int) throws -> ([Float], Int) {
        let trainer = ivfState.trainer
        let wanted = LocalIVFTraining.lists(forVectors: vectors)
        let (sample, count) = try trainer.compute {
            try ivfSample(size: LocalIVFTraining.sampleSize(lists: wanted, dimensions: dimensions), dimensions)
        }
        trainer.holdSample(bytes: sample.bytes)
        defer { trainer.holdSample(bytes: 0) }
        let lists = min(LocalIVFTraining.lists(forVectors: count), sample.count)
        guard lists > 0, !trainer.isStopped else { return ([], count) }
        let centroids = try trainer.compute {
            try LocalIVFTraining.centroids(sample: sample, lists: lists) { trainer.isStopped }
        }
        return (centroids, count)
    }

    /// Up to `size` of the stored vectors of `dimensions`, as their records' labels, from one read
    /// transaction: a reservoir sample, by the seeded generator, in key order; and the number of vectors the
    /// snapshot held.
    private func ivfSample(size: Int, _ dimensions: Int) throws -> (LocalIVFSample, Int) {
        let (vectors, labels) = (try environment.database("vectors"), try environment.database("ann-labels"))
        var random = LocalIVFTraining.SplitMix(seed: LocalIVFTraining.seed ^ 0x5A3F)
        var sample = LocalIVFSample(capacity: 0, dimensions: dimensions, environment: environment)
        var seen = 0
        var count = 0
        try environment.read { txn in
            count = try txn.count(vectors)
            sample = LocalIVFSample(capacity: min(size, count), dimensions: dimensions, environment: environment)
            try txn.forEach(vectors) { key, value in
                guard value.count >= 4, Int(UInt32(littleEndian: value.loadUnaligned(as: UInt32.self))) == dimensions,
                    value.count >= 4 + dimensions * 4
                else { return true }
                defer { seen += 1 }
                // A record without a label (written by another index meanwhile) is left out.
                let label = { try txn.get(labels, Array(key)).map(Self.number) }
                if sample.count < sample.capacity {
                    if let label = try label() { sample.append(label) }
                } else {
                    let slot = Int(random.next() % UInt64(seen + 1))
                    if slot < sample.capacity, let label = try label() { sample.replace(slot, with: label) }
                }
                return true
            }
        }
        return (sample, count)
    }
}
