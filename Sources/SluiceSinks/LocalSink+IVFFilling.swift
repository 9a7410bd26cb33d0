import Foundation
import SluiceCore
import SluiceLMDB

/// Filling an epoch's lists and deleting retired epochs, on the trainer's thread
/// (`LocalSink+IVFTraining.swift`), in bounded commits between the writer's:
///
/// - Each part of the lists is computed from a snapshot (a read transaction): the next labels in order from
///   the epoch's progress that are in no list yet, with their nearest centroid and their 8-bit code. Only
///   then a write transaction applies it, and checks each label against the store as it is now: a label
///   placed since the snapshot (a write keeps the epoch in training up to date, from the vector it wrote) or
///   no longer a record's (deleted, or given to another record, which its write placed) is skipped; `ivf-where`
///   tells which.
/// - The commit that finds no label left makes the epoch `current` and retires the old one.
extension LocalSink {
    /// One part of an epoch's lists, computed from a snapshot.
    private struct IVFPart: Sendable {
        /// The progress the snapshot started from.
        var from: UInt64
        /// The progress after this part.
        var next: UInt64
        /// Whether no label follows this part in the snapshot.
        var reachedEnd: Bool
        var entries: [(label: UInt32, id: [UInt8], list: UInt32, entry: [UInt8])]
    }

    /// Fills the lists of `number` (in training) from its progress on, a bounded commit at a time, and
    /// makes it current in the last.
    func fillIVF(_ number: UInt32) throws {
        let trainer = ivfState.trainer
        let ivf = try environment.database(LocalIVFLayout.database)
        let lists = try LocalIVFLists(environment: environment)
        let ann = try environment.database("ann")
        while !trainer.isStopped {
            guard let part = try trainer.compute({ try ivfPart(number) }) else { return }
            trainer.reach(.partComputed)
            CrashPoint.reach("local.ivf-part-computed")
            let finished: Bool = try ivfTrainerWrite { txn in
                guard try txn.get(ivf, LocalIVFLayout.building).map({ LocalIVFLayout.uint32($0) }) == number else {
                    return true  // finished or retired by another process
                }
                // Another process filling the same epoch went on meanwhile: compute from its progress.
                let progress = try txn.get(ivf, LocalIVFLayout.progressKey(number)).map(Self.number) ?? 0
                guard progress == part.from else { return false }
                for item in part.entries {
                    guard try txn.get(ann, ANNKey.labelPrefix + Self.bytes(UInt64(item.label))) == item.id,
                        try lists.place(number, label: item.label, txn) == nil
                    else { continue }
                    try lists.insert(item.entry, label: item.label, list: item.list, number, txn)
                }
                guard part.reachedEnd else {
                    try txn.put(ivf, LocalIVFLayout.progressKey(number), Self.bytes(part.next))
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

    /// The next part of `number`'s lists from a snapshot: at most `sink.local_commit_pages` labels (at least
    /// 16) from its progress, nil when it is no longer in training.
    private func ivfPart(_ number: UInt32) throws -> IVFPart? {
        let (ivf, ann, vectors) = (
            try environment.database(LocalIVFLayout.database), try environment.database("ann"),
            try environment.database("vectors")
        )
        let lists = try LocalIVFLists(environment: environment)
        let budget = max(16, commitPages)
        return try environment.read { txn -> IVFPart? in
            guard try txn.get(ivf, LocalIVFLayout.building).map({ LocalIVFLayout.uint32($0) }) == number else {
                return nil
            }
            guard let epoch = try ivfEpoch(number, txn) else {
                throw SluiceError(.sinkFailed, "the IVF index's epoch \(number) has no centroids")
            }
            let from = try txn.get(ivf, LocalIVFLayout.progressKey(number)).map(Self.number) ?? 0
            var part = IVFPart(from: from, next: from, reachedEnd: true, entries: [])
            var done = 0
            try txn.forEach(ann, from: ANNKey.labelPrefix + Self.bytes(from)) { key, id in
                guard key.count == ANNKey.labelPrefix.count + 8, key.starts(with: ANNKey.labelPrefix) else {
                    return false
                }
                if done == budget {
                    part.reachedEnd = false
                    return false
                }
                let label = Self.number(Array(key.dropFirst(ANNKey.labelPrefix.count)))
                part.next = label + 1
                done += 1
                let small = UInt32(truncatingIfNeeded: label)
                // A write since the training began put it there already, from its vector now.
                guard try lists.place(number, label: small, txn) == nil,
                    let value = try txn.get(vectors, Array(id)),
                    let vector = value.withUnsafeBytes(Self.vector(encoded:)),
                    vector.count == epoch.dimensions
                else { return true }
                part.entries.append(
                    (small, Array(id), epoch.nearest(vector), LocalIVFLayout.entry(label: small, vector: vector))
                )
                return true
            }
            return part
        }
    }

    /// Whether an epoch waits to have its entries deleted.
    func hasRetiredIVFEpochs() throws -> Bool {
        let ivf = try environment.database(LocalIVFLayout.database)
        return try environment.read { txn in
            var found = false
            try txn.forEach(ivf, from: LocalIVFLayout.retiredPrefix) { key, _ in
                found = key.starts(with: LocalIVFLayout.retiredPrefix)
                return false
            }
            return found
        }
    }

    /// Deletes the entries of retired epochs, in commits of a bounded number of keys (none without one: the
    /// writer is not made to wait for nothing).
    func deleteRetiredIVFEpochs() throws {
        guard try hasRetiredIVFEpochs() else { return }
        let ivf = try environment.database(LocalIVFLayout.database)
        let (lists, places) = (
            try environment.database(LocalIVFLayout.listsDatabase),
            try environment.database(LocalIVFLayout.whereDatabase)
        )
        let budget = max(64, 4 * commitPages)
        while !ivfState.trainer.isStopped {
            let more: Bool = try ivfTrainerWrite { txn in
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
