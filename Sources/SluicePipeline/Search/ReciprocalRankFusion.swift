import SluiceCore

/// Fuses rankings by reciprocal rank (Cormack et al., 2009): a record scores Σ 1 / (k + rank) over the
/// rankings that hold it, so that agreement between rankings counts more than either ranking's scores,
/// which are not comparable (cosine against BM25).
public struct ReciprocalRankFusion: Sendable {
    /// The damping constant; 60 is the paper's and most engines' default.
    public var k: Double

    public init(k: Double = 60) { self.k = k }

    /// Records in fused order, with their fused scores; ties keep the first ranking's order.
    public func fuse(_ rankings: [[SearchHit]]) -> [(record: VectorRecord, score: Double)] {
        var scores: [VectorID: Double] = [:]
        var order: [VectorID] = []
        var records: [VectorID: VectorRecord] = [:]
        for ranking in rankings {
            for (rank, hit) in ranking.enumerated() {
                let id = hit.record.id
                if records[id] == nil {
                    records[id] = hit.record
                    order.append(id)
                }
                scores[id, default: 0] += 1 / (k + Double(rank + 1))
            }
        }
        let position = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        return order.sorted { a, b in
            scores[a]! != scores[b]! ? scores[a]! > scores[b]! : position[a]! < position[b]!
        }
        .map { (records[$0]!, scores[$0]!) }
    }
}
