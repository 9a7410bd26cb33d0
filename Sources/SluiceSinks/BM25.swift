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
        scores(postings.map { (records: $0.count, list: $0) }, corpus: corpus)
    }

    /// Every unit's score, each unit a record or a row or record of one (`KeywordIndex+Units.swift`).
    /// - Parameter postings: each distinct query term's postings, live ones only, and the number of records
    ///   among them (the df: a record's units hold a term once between them).
    func scores<ID: Hashable>(
        _ postings: [(records: Int, list: [(id: ID, frequency: Int, length: Int)])],
        corpus: Corpus
    ) -> [ID: Double] {
        var scores: [ID: Double] = [:]
        let n = Double(max(corpus.documents, 1))
        for (records, list) in postings where !list.isEmpty {
            let df = Double(records)
            let idf = log(1 + (n - df + 0.5) / (df + 0.5))
            for posting in list {
                let tf = Double(posting.frequency)
                let norm = k1 * (1 - b + b * Double(posting.length) / corpus.averageLength)
                scores[posting.id, default: 0] += idf * tf * (k1 + 1) / (tf + norm)
            }
        }
        return scores
    }

    /// A unit of a record: the record's key and the unit's number in it (0 for a record scored whole).
    struct Unit<ID: Hashable>: Hashable {
        var id: ID
        var unit: Int
    }

    /// Each record's score as its best unit's.
    static func best<ID: Hashable>(_ scores: [Unit<ID>: Double]) -> [ID: Double] {
        var best: [ID: Double] = [:]
        best.reserveCapacity(scores.count)
        for (unit, score) in scores where score > best[unit.id] ?? -.infinity { best[unit.id] = score }
        return best
    }
}
