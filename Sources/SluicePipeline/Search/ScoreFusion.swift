import SluiceCore

/// Fuses a vector ranking and a keyword ranking by their scores (``SearchFusion/score(vectorWeight:questionWeight:)``):
/// `w × v + (1 − w) × k` per record, where
/// - `v` is the record's vector score min-max normalized within the vector ranking (1 for its first, 0 for
///   its last or a record it does not hold), so any metric's scale (cosine, inner product, negative values)
///   fits;
/// - `k` is the record's keyword score divided by the keyword ranking's first (BM25 and PostgreSQL's
///   `ts_rank` are never negative), so a short ranking's last hit stays above records without the words;
///   scores below zero, or none above it, fall back to min-max;
/// - `w` is `vectorWeight × keywordDoubt`, per query: the vector ranking counts when the keyword ranking is
///   flat (its tenth score close to its first, as for a question in common words); a steep drop after a
///   rare code or name is a confident keyword ranking, and fewer than ten hits is the steepest, so
///   `DEVRANDOM_WAIT`, a keyword match 2.6× the next, stays first. A question in words (``QueryShape``: nine
///   or more plain words) has `questionWeight` in place of `vectorWeight`: the vector ranking answers those
///   best. A look-up of codes (no plain word: `path.sep`) has 0, the keyword ranking's order (records it
///   lacks after it, in the vector ranking's order): its keyword ranking can be flat where the code's parts
///   are common words of the corpus (`path`, `sep` in the Node.js docs), and the vector ranking knows no
///   more about a code than its spelling.
///
/// Only ratios of one ranking's own scores are used, nothing on one embedder's cosine scale: a weight
/// scaled by the vector ranking's top cosine (0 at 0.3, full at 0.8, MiniLM's range) or by how far it
/// stands out from its candidates was measured too and did not hold on the held-out set. The constants
/// were chosen on Benchmarks/retrieval/queries.jsonl and checked on heldout.jsonl (README there, "Titles and
/// heading paths in the keyword index": vector weight 0.15, the ramp from 0.3 to 0.8; the question weight 0.7
/// then, 0.8 since "The last misses", chosen on both stores' tuning sets).
/// Where it falls below keyword alone (a few table rows, a heading, on these sets) a flat keyword ranking's
/// near ties are reordered by the vector ranking's tail, as they are, rightly, for two option look-ups; 363
/// variants replayed (vector normalization, a floor on vector ranks, a weight for a confident vector ranking,
/// the query's shape) did not tell them apart (README there, "pgvector on the judged sets, and the remaining
/// misses read"; `fusion_grid.py`).
struct ScoreFusion: Sendable {
    var vectorWeight: Double
    /// The vector ranking's largest weight for a question in words.
    var questionWeight: Double = SearchFusion.defaultQuestionWeight
    /// The keyword ranking's doubt rises from 0 to 1 as its tenth score over its first goes over this range.
    var flatness: ClosedRange<Double> = 0.3...0.8

    /// Records in fused order with their fused scores (0…1); ties keep the vector ranking's order, then
    /// the keyword ranking's. A record in both rankings appears once; a ranking repeating a record counts
    /// its first (best) place. `query` is the text searched (its shape sets the largest vector weight).
    func fuse(query: String, vector: [SearchHit], keyword: [SearchHit]) -> [(record: VectorRecord, score: Double)] {
        let shape = QueryShape(query)
        let largest = shape.isLookupOfCodes ? 0 : shape.isQuestionInWords ? questionWeight : vectorWeight
        let weight = largest * keywordDoubt(keyword)
        let v = Self.minMax(vector)
        let k = Self.byFirst(keyword)
        var order: [VectorID] = []
        var records: [VectorID: VectorRecord] = [:]
        for hit in vector + keyword where records[hit.record.id] == nil {
            records[hit.record.id] = hit.record
            order.append(hit.record.id)
        }
        let fused = order.enumerated().map { position, id in
            (position: position, id: id, score: weight * (v[id] ?? 0) + (1 - weight) * (k[id] ?? 0))
        }
        return fused.sorted { a, b in a.score != b.score ? a.score > b.score : a.position < b.position }
            .map { (records[$0.id]!, $0.score) }
    }

    /// 0…1: how flat the keyword ranking is (its tenth score over its first); 0 with fewer than ten hits,
    /// 1 with none (nothing to trust over the vector ranking).
    func keywordDoubt(_ ranking: [SearchHit]) -> Double {
        guard let first = ranking.first.map({ Double($0.score) }) else { return 1 }
        guard ranking.count >= 10, first > 0 else { return 0 }
        return Self.ramp(Double(ranking[9].score) / first, over: flatness)
    }

    static func ramp(_ x: Double, over range: ClosedRange<Double>) -> Double {
        guard x.isFinite else { return 0 }
        guard range.upperBound > range.lowerBound else { return x >= range.upperBound ? 1 : 0 }
        return min(1, max(0, (x - range.lowerBound) / (range.upperBound - range.lowerBound)))
    }

    /// Scores mapped to 0…1 within the ranking (the highest 1, the lowest 0; all equal: 1).
    static func minMax(_ ranking: [SearchHit]) -> [VectorID: Double] {
        let scores = ranking.map { Double($0.score) }.filter(\.isFinite)
        guard let low = scores.min(), let high = scores.max() else { return [:] }
        var out: [VectorID: Double] = [:]
        for hit in ranking where out[hit.record.id] == nil {
            let score = Double(hit.score)
            out[hit.record.id] = !score.isFinite ? 0 : high > low ? (score - low) / (high - low) : 1
        }
        return out
    }

    /// Scores over the ranking's highest, when all are ≥ 0 and the highest is > 0; else ``minMax(_:)``.
    static func byFirst(_ ranking: [SearchHit]) -> [VectorID: Double] {
        let scores = ranking.map { Double($0.score) }.filter(\.isFinite)
        guard let low = scores.min(), let high = scores.max(), low >= 0, high > 0 else { return minMax(ranking) }
        var out: [VectorID: Double] = [:]
        for hit in ranking where out[hit.record.id] == nil {
            let score = Double(hit.score)
            out[hit.record.id] = score.isFinite ? score / high : 0
        }
        return out
    }
}
