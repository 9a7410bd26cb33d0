import SluiceCore

extension SearchFusion {
    /// The vector and keyword rankings merged by this rule: records in fused order with their fused scores.
    /// Either ranking may be empty; a record in both appears once.
    func fuse(vector: [SearchHit], keyword: [SearchHit]) -> [(record: VectorRecord, score: Double)] {
        switch rule {
        case .reciprocalRank(let k): ReciprocalRankFusion(k: k).fuse([vector, keyword])
        case .score(let vectorWeight): ScoreFusion(vectorWeight: vectorWeight).fuse(vector: vector, keyword: keyword)
        }
    }
}
