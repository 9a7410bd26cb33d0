import Foundation
import SluiceCore
import SluiceLMDB

/// Training the IVF index (docs/LOCAL_INDEX.md, "Training" and "Retraining rule"), on the writer thread
/// before a write:
///
/// - Below `sink.ivf.exact_below` vectors nothing is trained (searches scan). The first write that finds the
///   store at that size trains nlist = 2√n centroids (``LocalIVFTraining``) on a sample of the stored
///   vectors, records them as a new epoch `building` in one commit, then fills its lists in commits of about
///   `sink.local_commit_pages` entries, in label order, recording its progress in each; the last commit
///   makes it `current`. Meanwhile every write keeps the epoch in training up to date as well, and the
///   filling skips labels already in it, so shards writing the same store stay consistent.
/// - A `kill -9` during training leaves the epoch `building`, never `current`: searches go on with the old
///   epoch, or scan; the next writer with `ivf` goes on filling it from its progress.
/// - When the store holds ``LocalIVFTraining/retrainGrowth`` times the vectors the current epoch was trained
///   on, a new epoch is trained the same way while searches use the old one; the commit that makes it
///   `current` retires the old one, whose entries are then deleted in bounded commits.
extension LocalSink {
    /// Trains, goes on training or retires what the IVF index needs before a write. A failure is not tried
    /// again by this process (searches scan, or use the current epoch, which every write keeps up to date).
    func ensureIVF() throws {
        guard ivfIndexed, !ivfState.trainingFailed else { return }
        do {
            try deleteRetiredIVFEpochs()
            let (ivf, vectors) = (
                try environment.database(LocalIVFLayout.database), try environment.database("vectors")
            )
            let (count, current, building) = try environment.read { txn in
                (
                    try txn.count(vectors),
                    try txn.get(ivf, LocalIVFLayout.current).map { LocalIVFLayout.uint32($0) },
                    try txn.get(ivf, LocalIVFLayout.building).map { LocalIVFLayout.uint32($0) }
                )
            }
            if let building {
                try fillIVF(building)
            } else {
                guard count > 0, count >= indexSettings.exactBelow else { return }
                if let current, let epoch = try environment.read({ try ivfEpoch(current, $0) }),
                    count < LocalIVFTraining.retrainGrowth * max(1, epoch.trainedOn)
                {
                    return
                }
                try trainIVF(count: count)
            }
            try deleteRetiredIVFEpochs()
        } catch {
            ivfState.trainingFailed = true
            throw error
        }
    }

    /// Trains a new epoch on the store's `count` vectors and fills its lists.
    private func trainIVF(count: Int) throws {
        let ivf = try environment.database(LocalIVFLayout.database)
        if try environment.read({ try $0.get(ivf, LocalIVFLayout.labels) }) == nil { try relabelForIVF() }
        guard let dimensions = try firstVectorDimensions(), dimensions > 0 else { return }
        let wanted = LocalIVFTraining.lists(forVectors: count)
        let sample = try ivfSample(size: LocalIVFTraining.sampleSize(lists: wanted, dimensions: dimensions), dimensions)
        let lists = min(wanted, sample.count / dimensions)
        guard lists > 0 else { return }
        let centroids = LocalIVFTraining.centroids(sample: sample, dimensions: dimensions, lists: lists)
        let number: UInt32 = try environment.write { txn in
            // Another process sharing the store began one meanwhile: fill that one instead.
            if let other = try txn.get(ivf, LocalIVFLayout.building) { return LocalIVFLayout.uint32(other) }
            let number = try txn.get(ivf, LocalIVFLayout.nextEpoch).map { LocalIVFLayout.uint32($0) } ?? 1
            try txn.put(ivf, LocalIVFLayout.nextEpoch, LocalIVFLayout.bigEndian(number + 1))
            let epoch = LocalIVFEpoch(epoch: number, dimensions: dimensions, trainedOn: count, centroids: centroids)
            try txn.put(ivf, LocalIVFLayout.centroidsKey(number), epoch.encoded)
            try txn.put(ivf, LocalIVFLayout.progressKey(number), Self.bytes(0))
            try txn.put(ivf, LocalIVFLayout.building, LocalIVFLayout.bigEndian(number))
            return number
        }
        CrashPoint.reach("local.ivf-training-begun")
        try fillIVF(number)
    }

    /// Fills the lists of `number` (in training) from its progress on, a bounded commit at a time, and
    /// makes it current in the last.
    private func fillIVF(_ number: UInt32) throws {
        let (ivf, ann, vectors) = (
            try environment.database(LocalIVFLayout.database), try environment.database("ann"),
            try environment.database("vectors")
        )
        let lists = try LocalIVFLists(environment: environment)
        let budget = max(16, commitPages)
        while true {
            let finished: Bool = try environment.write { txn in
                guard try txn.get(ivf, LocalIVFLayout.building).map({ LocalIVFLayout.uint32($0) }) == number else {
                    return true  // finished or retired by another process
                }
                guard let epoch = try ivfEpoch(number, txn) else {
                    throw SluiceError(.sinkFailed, "the IVF index's epoch \(number) has no centroids")
                }
                var next = try txn.get(ivf, LocalIVFLayout.progressKey(number)).map(Self.number) ?? 0
                var done = 0
                var reachedEnd = true
                try txn.forEach(ann, from: ANNKey.labelPrefix + Self.bytes(next)) { key, id in
                    guard key.count == ANNKey.labelPrefix.count + 8, key.starts(with: ANNKey.labelPrefix) else {
                        return false
                    }
                    if done == budget {
                        reachedEnd = false
                        return false
                    }
                    let label = Self.number(Array(key.dropFirst(ANNKey.labelPrefix.count)))
                    next = label + 1
                    done += 1
                    let small = UInt32(truncatingIfNeeded: label)
                    // A write since the training began put it there already, from its vector now.
                    guard try lists.place(number, label: small, txn) == nil,
                        let value = try txn.get(vectors, Array(id)),
                        let vector = value.withUnsafeBytes(Self.vector(encoded:)),
                        vector.count == epoch.dimensions
                    else { return true }
                    try lists.insert(
                        LocalIVFLayout.entry(label: small, vector: vector),
                        label: small,
                        list: epoch.nearest(vector),
                        number,
                        txn
                    )
                    return true
                }
                guard reachedEnd else {
                    try txn.put(ivf, LocalIVFLayout.progressKey(number), Self.bytes(next))
                    return false
                }
                if let old = try txn.get(ivf, LocalIVFLayout.current), LocalIVFLayout.uint32(old) != number {
                    try txn.put(ivf, LocalIVFLayout.retiredPrefix + old, [])
                }
                try txn.put(ivf, LocalIVFLayout.current, LocalIVFLayout.bigEndian(number))
                try txn.delete(ivf, LocalIVFLayout.building)
                try txn.delete(ivf, LocalIVFLayout.progressKey(number))
                return true
            }
            if finished { return }
            CrashPoint.reach("local.ivf-training-part")
        }
    }

    /// Gives every record a label (`ann`, `ann-labels`) in one write transaction, as a graph rebuild does,
    /// and empties the lists (keyed by the old labels): a store written with `exact`, or by a graph that
    /// could not follow, has records without one.
    private func relabelForIVF() throws {
        let (vectors, ann, labels) = (
            try environment.database("vectors"), try environment.database("ann"),
            try environment.database("ann-labels")
        )
        try environment.write { txn in
            let generation = (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0) + 1
            try txn.drop(ann)
            try txn.drop(labels)
            try txn.put(ann, ANNKey.generation, Self.bytes(generation))
            var next: UInt64 = 0
            try txn.forEach(vectors) { key, _ in
                try txn.put(labels, Array(key), Self.bytes(next))
                try txn.put(ann, ANNKey.labelPrefix + Self.bytes(next), Array(key))
                next += 1
                return true
            }
            try txn.put(ann, ANNKey.nextLabel, Self.bytes(next))
            try ivfClear(txn)
        }
        CrashPoint.reach("local.ivf-relabelled")
    }

    /// Up to `size` of the stored vectors of `dimensions`, as unit vectors (flat): a reservoir sample, by
    /// the seeded generator, in key order.
    private func ivfSample(size: Int, _ dimensions: Int) throws -> [Float] {
        let vectors = try environment.database("vectors")
        var random = LocalIVFTraining.SplitMix(seed: LocalIVFTraining.seed ^ 0x5A3F)
        var sample: [Float] = []
        var seen = 0
        try environment.read { txn in
            try txn.forEach(vectors) { _, value in
                guard let vector = Self.vector(encoded: value), vector.count == dimensions else { return true }
                if seen < size {
                    sample += LocalIVFTraining.unit(vector)
                } else {
                    let slot = Int(random.next() % UInt64(seen + 1))
                    if slot < size {
                        sample.replaceSubrange(
                            slot * dimensions..<(slot + 1) * dimensions,
                            with: LocalIVFTraining.unit(vector)
                        )
                    }
                }
                seen += 1
                return true
            }
        }
        return sample
    }

    /// Deletes the entries of retired epochs, in commits of a bounded number of keys.
    func deleteRetiredIVFEpochs() throws {
        let ivf = try environment.database(LocalIVFLayout.database)
        let (lists, places) = (
            try environment.database(LocalIVFLayout.listsDatabase),
            try environment.database(LocalIVFLayout.whereDatabase)
        )
        let budget = max(64, 4 * commitPages)
        while true {
            let more: Bool = try environment.write { txn in
                var retired: UInt32?
                try txn.forEach(ivf, from: LocalIVFLayout.retiredPrefix) { key, _ in
                    if key.count == LocalIVFLayout.retiredPrefix.count + 4,
                        key.starts(with: LocalIVFLayout.retiredPrefix)
                    {
                        retired = LocalIVFLayout.uint32(key, at: LocalIVFLayout.retiredPrefix.count)
                    }
                    return false
                }
                guard let number = retired else { return false }
                var doomed: [(LMDBDatabase, [UInt8])] = []
                for (database, prefix) in [
                    (lists, LocalIVFLayout.bigEndian(number)), (places, LocalIVFLayout.bigEndian(number)),
                    (ivf, LocalIVFLayout.sizePrefix(number)),
                ] where doomed.count < budget {
                    try txn.forEach(database, from: prefix) { key, _ in
                        guard key.starts(with: prefix), doomed.count < budget else { return false }
                        doomed.append((database, Array(key)))
                        return true
                    }
                }
                for (database, key) in doomed { try txn.delete(database, key) }
                if doomed.count < budget {
                    try txn.delete(ivf, LocalIVFLayout.centroidsKey(number))
                    try txn.delete(ivf, LocalIVFLayout.progressKey(number))
                    try txn.delete(ivf, LocalIVFLayout.retiredPrefix + LocalIVFLayout.bigEndian(number))
                }
                return true
            }
            if !more { return }
        }
    }
}
