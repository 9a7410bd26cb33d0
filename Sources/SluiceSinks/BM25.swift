import Foundation

/// Okapi BM25 over postings: a record scores Σ idf(t) · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen)) over
/// the query's distinct terms t, with idf(t) = ln(1 + (N − df + 0.5) / (df + 0.5)) (Lucene's, never
/// negative). Pure: the local store feeds it postings read from LMDB, or counted by a scan.
struct BM25: Sendable, Hashable {
    /// Term-frequency saturation.
    var k1: Double = 1.2
    /// Length normalization (0: none, 1: full).
    var b: Double = 0.75

    /// One record's occurrences of a term, and the record's length in terms.
    struct Posting: Hashable {
        var id: String
        var frequency: Int
        var length: Int
    }

    /// The corpus: how many records, and how many terms they hold in all.
    struct Corpus: Hashable {
        var documents: Int
        var terms: Int
        var averageLength: Double { documents > 0 ? max(1, Double(terms) / Double(documents)) : 1 }
    }

    /// Records by descending score (ties by id, so that equal scores rank the same way every time).
    /// - Parameter postings: each distinct query term's postings.
    func rank(_ postings: [[Posting]], corpus: Corpus) -> [(id: String, score: Double)] {
        scores(
            postings.map { list in list.map { (id: $0.id, frequency: $0.frequency, length: $0.length) } },
            corpus: corpus
        )
        .map { (id: $0.key, score: $0.value) }
        .sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }

    /// Every record's score, whatever identifies it (the local index scores record numbers, and looks ids
    /// up only for the records a search returns). The sums run over the lists in their order, so the same
    /// postings give the same bits whatever the key.
    /// - Parameter postings: each distinct query term's postings, live ones only (their count is the df).
    func scores<ID: Hashable>(
        _ postings: [[(id: ID, frequency: Int, length: Int)]],
        corpus: Corpus
    ) -> [ID: Double] {
        var scores: [ID: Double] = [:]
        let n = Double(max(corpus.documents, 1))
        for list in postings where !list.isEmpty {
            let df = Double(list.count)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for posting in list {
                let tf = Double(posting.frequency)
                let norm = k1 * (1 - b + b * Double(posting.length) / corpus.averageLength)
                scores[posting.id, default: 0] += idf * tf * (k1 + 1) / (tf + norm)
            }
        }
        return scores
    }
}
