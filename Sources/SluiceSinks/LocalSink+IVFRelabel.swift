import Foundation
import SluiceCore
import SluiceLMDB

/// Giving every record a label before the IVF index trains, on the trainer's thread, when the store was
/// written without them (with `exact`, or by a graph that could not follow: the `labels` mark is gone, some
/// records have no label and some labels name deleted records). In bounded commits, between which the writer
/// writes, as the filling of the lists is (`LocalSink+IVFFilling.swift`):
///
/// - The first commit forgets every label (`ann`, `ann-labels`; the generation is kept) and the lists (keyed by
///   the old labels), and records `relabelling` → the first record key. From then on a write with `ivf` gives
///   the records it writes a label, as it always does, and a delete frees theirs.
/// - Each next commit walks at most `sink.local_commit_pages` records (at least 16) in key order from
///   `relabelling`, gives a label to each that has none yet (a write gave the others theirs), and records where
///   it stopped; the last sets the `labels` mark and removes `relabelling`.
/// - A `kill -9` between two commits leaves `relabelling`: the next job goes on from it. A write that does not
///   keep the labels (`exact`) removes it with the mark (``ivfInvalidate(keepingLabels:_:)``): the records it
///   wrote before the walk's place would be missed, so the next job starts again from the first commit.
extension LocalSink {
    /// Labels every record, a bounded commit at a time, unless the trainer is stopped meanwhile; the `labels`
    /// mark is set when it is done.
    func relabelForIVF() throws {
        let trainer = ivfState.trainer
        let (ivf, ann, labels) = (
            try environment.database(LocalIVFLayout.database), try environment.database("ann"),
            try environment.database("ann-labels")
        )
        try ivfTrainerWrite { txn in
            guard try txn.get(ivf, LocalIVFLayout.relabelling) == nil else { return }  // resumed
            let generation = (try txn.get(ann, ANNKey.generation).map(Self.number) ?? 0) + 1
            try txn.drop(ann)
            try txn.drop(labels)
            try txn.put(ann, ANNKey.generation, Self.bytes(generation))
            try ivfClear(txn)
            try txn.delete(ivf, LocalIVFLayout.labels)
            try txn.put(ivf, LocalIVFLayout.relabelling, [])
        }
        while !trainer.isStopped {
            guard try ivfTrainerWrite({ try relabelPart($0) }) else { break }
            trainer.reach(.relabelPart)
            CrashPoint.reach("local.ivf-relabel-part")
        }
        CrashPoint.reach("local.ivf-relabelled")
    }

    /// One commit of the relabelling: labels the next records from `relabelling` on, and says whether more
    /// follow (false: done, or no relabelling under way any more).
    private func relabelPart(_ txn: LMDBTransaction) throws -> Bool {
        let (ivf, ann, labels, vectors) = (
            try environment.database(LocalIVFLayout.database), try environment.database("ann"),
            try environment.database("ann-labels"), try environment.database("vectors")
        )
        guard let from = try txn.get(ivf, LocalIVFLayout.relabelling) else { return false }
        let budget = max(16, commitPages)
        var next = try txn.get(ann, ANNKey.nextLabel).map(Self.number) ?? 0
        var walked = 0
        var stoppedAt: [UInt8]?
        try txn.forEach(vectors, from: from.isEmpty ? nil : from) { key, _ in
            if walked == budget {
                stoppedAt = Array(key)
                return false
            }
            walked += 1
            let id = Array(key)
            guard try txn.get(labels, id) == nil else { return true }  // written since the first commit
            try txn.put(labels, id, Self.bytes(next))
            try txn.put(ann, ANNKey.labelPrefix + Self.bytes(next), id)
            next += 1
            return true
        }
        try txn.put(ann, ANNKey.nextLabel, Self.bytes(next))
        if let stoppedAt {
            try txn.put(ivf, LocalIVFLayout.relabelling, stoppedAt)
            return true
        }
        try txn.delete(ivf, LocalIVFLayout.relabelling)
        try txn.put(ivf, LocalIVFLayout.labels, [])
        return false
    }
}
