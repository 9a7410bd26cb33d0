import SluiceCore

extension SearchFusion {
    /// The vector and keyword rankings of `query` merged by this rule: records in fused order with their
    /// fused scores. Either ranking may be empty; a record in both appears once.
    func fuse(
        query: String,
        vector: [SearchHit],
        keyword: [SearchHit]
    ) -> [(record: VectorRecord, score: Double)] {
        switch rule {
        case .reciprocalRank(let k): ReciprocalRankFusion(k: k).fuse([vector, keyword])
        case .score(let vectorWeight, let questionWeight):
            ScoreFusion(vectorWeight: vectorWeight, questionWeight: questionWeight)
                .fuse(query: query, vector: vector, keyword: keyword)
        }
    }
}
