import Logging
import SluiceCore

/// `sluice verify` and the store's records that cannot be read (docs/OPERATIONS.md, "verify"): each is
/// reported with its id, its document key and why; `--repair` deletes them, so that their documents miss
/// those vectors and are embedded again (their vectors from the embedding cache).
extension Pipeline {
    /// The store's records that cannot be read, each with its document key: from the record's bytes when they
    /// still give it, else from the checkpoint's document that tracks the id (`documents`: key → ids).
    func unreadableRecords(
        in sink: any VectorSink,
        documents: [String: [VectorID]]
    ) async throws -> [UnreadableRecord] {
        var found = try await sink.unreadableRecords()
        guard !found.isEmpty else { return [] }
        let wanted = Set(found.filter { $0.documentKey == nil }.map(\.id))
        if !wanted.isEmpty {
            var owner: [VectorID: String] = [:]
            for (key, ids) in documents {
                for id in ids where wanted.contains(id) { owner[id] = key }
            }
            for index in found.indices where found[index].documentKey == nil {
                found[index].documentKey = owner[found[index].id]
            }
        }
        logger.warning(
            "verify: records of the store that cannot be read",
            metadata: ["sluice-vectors": "\(found.count)", "sluice-sink": "\(sink.name)"]
        )
        return found.sorted { $0.id < $1.id }
    }

    /// Deletes the records that cannot be read (within the mass-delete guard).
    func deleteUnreadable(_ records: [UnreadableRecord], from sink: any VectorSink) async throws {
        try checkMassDelete(deleting: records.count, documents: 0, stored: try await sink.count())
        var keys: [VectorID: String] = [:]
        for record in records { keys[record.id] = record.documentKey }
        var start = 0
        while start < records.count {
            let end = min(start + 1000, records.count)
            try await sink.delete(records[start..<end].map(\.id), documentKeys: keys)
            start = end
        }
        CrashPoint.reach("verify.unreadable-deleted")
        logger.info("verify: deleted records that cannot be read", metadata: ["sluice-vectors": "\(records.count)"])
    }
}
