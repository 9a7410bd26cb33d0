import Foundation
import SluiceLMDB

extension LocalSink {
    /// What is wrong with the IVF index against the records, in one read transaction: empty when, while the
    /// `labels` mark is there, every label (`ann`) names a stored record and the records all have one, and
    /// each live epoch holds every label in exactly one slot with `ivf-where` agreeing
    /// (``LocalIVFLists/problems(_:labels:complete:entryBytes:_:)``; an epoch in training holds a subset).
    func ivfProblems() throws -> [String] {
        guard let ivf = try environment.existingDatabase(LocalIVFLayout.database) else { return [] }
        let (ann, vectors) = (try environment.database("ann"), try environment.database("vectors"))
        let lists = try LocalIVFLists(environment: environment)
        return try environment.read { txn in
            var problems: [String] = []
            var labels = Set<UInt32>()
            // Without the mark (writes with `exact`), labels may name deleted records: nothing uses them then.
            let marked = try txn.get(ivf, LocalIVFLayout.labels) != nil
            try txn.forEach(ann, from: ANNKey.labelPrefix) { key, id in
                guard key.count == ANNKey.labelPrefix.count + 8, key.starts(with: ANNKey.labelPrefix) else {
                    return false
                }
                let label = UInt32(truncatingIfNeeded: Self.number(Array(key.dropFirst(ANNKey.labelPrefix.count))))
                labels.insert(label)
                if marked, try txn.get(vectors, Array(id)) == nil { problems.append("label \(label) names no record") }
                return true
            }
            if marked, labels.count != (try txn.count(vectors)) {
                problems.append("\(labels.count) labels for \(try txn.count(vectors)) records")
            }
            for (key, complete) in [(LocalIVFLayout.current, true), (LocalIVFLayout.building, false)] {
                guard let number = try txn.get(ivf, key).map({ LocalIVFLayout.uint32($0) }) else { continue }
                guard let epoch = try ivfEpoch(number, txn) else {
                    problems.append("epoch \(number) has no centroids")
                    continue
                }
                if !marked { problems.append("epoch \(number) is live without the labels mark") }
                problems += try lists.problems(
                    number,
                    labels: labels,
                    complete: complete,
                    entryBytes: LocalIVFLayout.entryBytes(dimensions: epoch.dimensions),
                    txn
                ).map { "epoch \(number): \($0)" }
            }
            return problems
        }
    }
}
