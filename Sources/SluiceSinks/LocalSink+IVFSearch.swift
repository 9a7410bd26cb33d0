import CHNSW
import Foundation
import SluiceCore
import SluiceLMDB

/// Searching the IVF index (docs/LOCAL_INDEX.md, "Search"), in one read transaction, so that lists and
/// records are of one generation: the `nprobe` lists whose centroids are nearest to the query, their codes
/// scored with the graph's 8-bit kernels in blocks copied from the data file (`LMDBValueFile`), and the
/// best k + max(k, 8) ranked again by the stored float vectors, as the scan scores them. Ties fall as in the
/// scan: by id.
extension LocalSink {
    /// The best `k` by the IVF index, or nil when it cannot answer (no trained epoch yet, fewer vectors than
    /// `sink.ivf.exact_below`, a query of another dimension): the caller scans.
    func searchIVF(_ query: [Float], k: Int, skipping unreadable: LocalUnreadableRecords) throws -> [SearchHit]? {
        guard let ivf = try environment.existingDatabase(LocalIVFLayout.database),
            let lists = try environment.existingDatabase(LocalIVFLayout.listsDatabase),
            let ann = try environment.existingDatabase("ann")
        else { return nil }
        let vectors = try environment.database("vectors")
        let queryNorm = Self.norm(query)
        guard queryNorm > 0, k > 0 else { return [] }
        return try environment.read { txn -> [SearchHit]? in
            let count = try txn.count(vectors)
            guard count >= indexSettings.exactBelow,
                let number = try txn.get(ivf, LocalIVFLayout.current).map({ LocalIVFLayout.uint32($0) }),
                let epoch = try ivfEpoch(number, txn), query.count == epoch.dimensions
            else { return nil }
            let probes =
                ivfState.probes.map { min($0, epoch.lists) } ?? indexSettings.probes(lists: epoch.lists, vectors: count)
            let probed = epoch.nearest(LocalIVFTraining.unit(query), count: probes)
            let (labels, scanned) = try Self.bestCodes(
                query,
                among: probed,
                of: epoch,
                wanted: LocalANNIndex.candidates(for: k),
                lists: lists,
                txn
            )
            ivfState.count(lists: probed.count, codes: scanned)
            var candidates: [(score: Float, id: [UInt8], bytes: [UInt8])] = []
            for label in labels {
                guard let id = try txn.get(ann, ANNKey.labelPrefix + Self.bytes(UInt64(label))),
                    let bytes = try txn.get(vectors, id, largeValues: .copied)
                else { continue }
                candidates.append(
                    (bytes.withUnsafeBytes { Self.cosine(query, queryNorm: queryNorm, encoded: $0) }, id, bytes)
                )
            }
            candidates.sort { $0.score > $1.score || ($0.score == $1.score && $0.id.lexicographicallyPrecedes($1.id)) }
            // A record that does not decode is skipped (``LocalUnreadableRecords``): the next candidate takes
            // its place.
            var hits: [SearchHit] = []
            for candidate in candidates where hits.count < k {
                guard let record = try unreadable.record(id: candidate.id, candidate.bytes) else { continue }
                hits.append(SearchHit(score: candidate.score, record: record))
            }
            return hits
        }
    }

    /// The labels of the `wanted` best codes, by the 8-bit similarity, in the lists `probed`, and the number of
    /// codes scored.
    static func bestCodes(
        _ query: [Float],
        among probed: [UInt32],
        of epoch: LocalIVFEpoch,
        wanted: Int,
        lists: LMDBDatabase,
        _ txn: LMDBTransaction
    ) throws -> (labels: [UInt32], scanned: Int) {
        let entryBytes = LocalIVFLayout.entryBytes(dimensions: epoch.dimensions)
        var code = [UInt8](repeating: 0, count: entryBytes - 4)
        query.withUnsafeBufferPointer { q in
            code.withUnsafeMutableBufferPointer { sluice_ivf_encode(q.baseAddress, query.count, $0.baseAddress) }
        }
        var scores = [Float](repeating: 0, count: LocalIVFLayout.blockEntries)
        var best: [(score: Float, label: UInt32)] = []  // best first, at most `wanted`
        best.reserveCapacity(wanted + 1)
        var scanned = 0
        for list in probed {
            let prefix = LocalIVFLayout.listPrefix(epoch.epoch, list: list)
            // Blocks sit on their own pages, scattered through the file: copied, not mapped (each mapped block
            // would fault 16 pages in and pass the memory releaser's budget every 64 blocks; LMDBValueFile).
            try txn.forEach(lists, from: prefix, largeValues: .copied) { key, value in
                guard key.count == 12, key.starts(with: prefix) else { return false }
                let entries = min(value.count / entryBytes, LocalIVFLayout.blockEntries)
                guard entries > 0, let base = value.baseAddress else { return true }
                scanned += entries
                code.withUnsafeBufferPointer { q in
                    scores.withUnsafeMutableBufferPointer {
                        sluice_ivf_score(
                            q.baseAddress,
                            base.assumingMemoryBound(to: UInt8.self) + 4,
                            entries,
                            entryBytes,
                            epoch.dimensions,
                            $0.baseAddress
                        )
                    }
                }
                for slot in 0..<entries {
                    let score = scores[slot]
                    guard best.count < wanted || score > best[best.count - 1].score else { continue }
                    let label = LocalIVFLayout.label(in: value, at: slot * entryBytes)
                    let index = best.firstIndex { $0.score < score } ?? best.count
                    best.insert((score, label), at: index)
                    if best.count > wanted { best.removeLast() }
                }
                return true
            }
        }
        return (best.map(\.label), scanned)
    }

    // MARK: - For the benchmark

    /// Fixes the IVF index's `nprobe` for the rest of this process (nil: `sink.ivf.nprobe` again), whatever
    /// the setting says (the benchmark sweeps it).
    package func setProbes(_ nprobe: Int?) { ivfState.probes = nprobe }

    /// What this process's IVF searches scanned so far (the benchmark's codes a query).
    package var ivfScanned: LocalIVFScanCounts { ivfState.scanned }
}
