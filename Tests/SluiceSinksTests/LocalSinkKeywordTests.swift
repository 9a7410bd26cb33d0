import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local store's keyword index (KeywordIndex, LocalSink+Keyword): BM25 ranking, maintenance by upserts
/// and deletes in their own transactions, filters while ranking, the backfill of an older store.
@Suite struct LocalSinkKeywordTests {
    static func record(_ id: String, _ text: String, page: Int = 1, key: String = "doc.txt") -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: key,
            ordinal: 0,
            text: text,
            vector: [1, Float(id.utf8.count)],
            metadata: ["page": .int(page)]
        )
    }

    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-keyword-\(UInt64.random(in: 0...UInt64.max))"
        )
    }

    static func keyword(
        _ sink: LocalSink,
        _ text: String,
        k: Int = 10,
        filter: SearchFilter? = nil
    ) async throws
        -> [SearchHit]
    {
        try await sink.search(SearchRequest(mode: .keyword, text: text, k: k, filter: filter))
    }

    /// The ranking a freshly built index over exactly `records` gives: what the stored index must answer.
    static func expectedRanking(_ query: String, over records: [VectorRecord]) -> [(id: String, score: Double)] {
        let terms = KeywordIndex.counts(of: query).terms.sorted()
        var corpus = BM25.Corpus(documents: 0, terms: 0)
        var postings = [[BM25.Posting]](repeating: [], count: terms.count)
        for record in records {
            let counts = KeywordIndex.counts(of: record)
            corpus.documents += 1
            corpus.terms += counts.length
            for (index, term) in terms.enumerated() {
                if let frequency = counts.frequency(of: term) {
                    postings[index].append(.init(id: record.id.rawValue, frequency: frequency, length: counts.length))
                }
            }
        }
        return BM25().rank(postings, corpus: corpus)
    }

    static func expectSameRanking(
        _ sink: LocalSink,
        _ query: String,
        _ records: [VectorRecord],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let hits = try await keyword(sink, query, k: 100)
        let expected = expectedRanking(query, over: records)
        #expect(hits.map(\.record.id.rawValue) == expected.map(\.id), "\(query)", sourceLocation: sourceLocation)
        for (hit, want) in zip(hits, expected) {
            #expect(abs(Double(hit.score) - want.score) < 1e-4, "\(query)", sourceLocation: sourceLocation)
        }
    }

    /// Prepares the store at `dir` for a run (every run does that first: it builds the keyword index if it is
    /// missing or out of date) and says whether the index is then built and current.
    static func prepareAndCheckBuilt(_ dir: URL) async throws -> Bool {
        do {
            let sink = try LocalSink(directory: dir)
            try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        }
        let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26, readOnly: true)
        _ = try environment.database("meta")  // before the transaction that reads it
        return try environment.read { try KeywordIndex(environment: environment).isBuilt($0) }
    }

    static let corpus = [
        record("a", "The invoice total is 120 CHF including tax."),
        record("b", "The invoice total is 120 EUR including tax and the invoice date."),
        record("c", "Totals are rounded to the cent; the total of an invoice is shown on its first page."),
        record("d", "Shipping is free above a total of 50."),
    ]

    @Test("the record holding the query's rare term (a currency code) ranks first")
    func rareTermRanksFirst() async throws {
        let dir = Self.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.corpus)
        let hits = try await Self.keyword(sink, "invoice total in CHF")
        #expect(hits.first?.record.id.rawValue == "a")
        #expect(Set(hits.map(\.record.id.rawValue)) == ["a", "b", "c", "d"])
        #expect(hits.map(\.score) == hits.map(\.score).sorted(by: >))
        #expect(try await Self.keyword(sink, "nothing matches zebra").isEmpty)
        #expect(try await Self.keyword(sink, " ?! ").isEmpty)
        #expect(sink.searchModes == [.vector, .keyword])
        try await Self.expectSameRanking(sink, "invoice total in CHF", Self.corpus)
    }

    @Test("replacing and deleting records leaves no ghost postings: the index answers as one built afresh")
    func upsertReplaceDeleteKeepPostingsRight() async throws {
        let dir = Self.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.corpus)
        // Replace a's text (and send b twice in one batch: the last one wins), delete d.
        let a2 = Self.record("a", "A refund is issued in GBP within 14 days.")
        let b2 = Self.record("b", "The invoice date is the delivery date.")
        try await sink.upsert([a2, Self.record("b", "an intermediate text about CHF"), b2])
        try await sink.delete([VectorID(rawValue: "d"), VectorID(rawValue: "missing")])
        let live = [a2, b2, Self.corpus[2]]
        #expect(try await Self.keyword(sink, "CHF").isEmpty)  // a's and the intermediate b's old term
        #expect(try await Self.keyword(sink, "shipping free").isEmpty)  // d is gone
        #expect(try await Self.keyword(sink, "refund GBP").map(\.record.id.rawValue) == ["a"])
        for query in ["invoice total", "the date", "refund within 14 days", "page total cent"] {
            try await Self.expectSameRanking(sink, query, live)
        }
        try await sink.removeAll()
        #expect(try await Self.keyword(sink, "invoice").isEmpty)
        try await sink.upsert([Self.corpus[3]])
        try await Self.expectSameRanking(sink, "shipping total invoice", [Self.corpus[3]])
    }

    @Test("a filter applies while ranking: k results even when the best-ranked records are filtered out")
    func filterAppliesWhileRanking() async throws {
        let dir = Self.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        // 30 short records about tokens on page 1 outrank 4 long ones on page 2.
        let strong = (0..<30).map { Self.record(String(format: "s%02d", $0), "token token \($0)", page: 1) }
        let filler = Array(repeating: "other words", count: 40).joined(separator: " ")
        let weak = (0..<4).map { Self.record("w\($0)", "\(filler) token \(filler)", page: 2) }
        try await sink.upsert(strong + weak)
        let unfiltered = try await Self.keyword(sink, "token", k: 3)
        #expect(unfiltered.allSatisfy { $0.record.id.rawValue.hasPrefix("s") })
        let filtered = try await Self.keyword(sink, "token", k: 3, filter: try SearchFilter(parsing: "page = 2"))
        #expect(filtered.count == 3)
        #expect(filtered.allSatisfy { $0.record.metadata["page"]?.integer == 2 })
    }

    @Test("a store made before the keyword index is ranked by a scan when read-only, and indexed on its next write")
    func backfillOfAnOlderStore() async throws {
        let dir = Self.directory()
        defer { TemporaryDirectory.remove(dir) }
        // What an older Sluice wrote: `vectors` and `meta` only.
        do {
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let vectors = try environment.database("vectors")
            _ = try environment.database("meta")
            try environment.write { txn in
                for record in Self.corpus {
                    try txn.put(vectors, Array(record.id.rawValue.utf8), try LocalSink.encodeJSON(record))
                }
            }
        }
        do {
            let readOnly = try LocalSink(directory: dir, readOnly: true)
            try await Self.expectSameRanking(readOnly, "invoice total in CHF", Self.corpus)
        }
        #expect(try await Self.prepareAndCheckBuilt(dir))
        let sink = try LocalSink(directory: dir)
        try await Self.expectSameRanking(sink, "invoice total in CHF", Self.corpus)
        try await sink.upsert([Self.record("e", "CHF only")])
        try await Self.expectSameRanking(sink, "invoice total in CHF", Self.corpus + [Self.record("e", "CHF only")])
    }

    /// A kill -9 cannot leave the vectors and the keyword index apart: both are written in one LMDB write
    /// transaction, which LMDB commits whole (the new root page is written last) or not at all. What can be
    /// tested without a kill is the same rollback: a write that fails half-way (the map is full after some
    /// postings were written) leaves neither its vectors nor its postings behind.
    @Test("a write that fails half-way leaves vectors and keyword index as they were (one transaction)")
    func failedWriteLeavesBothUnchanged() async throws {
        let dir = Self.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir, mapSize: 1 << 20)
        try await sink.upsert(Self.corpus)
        let words = (0..<3000).map { "word\($0)" }.joined(separator: " ")
        let big = (0..<80).map { Self.record("big\($0)", "CHF \(words)") }
        await #expect(throws: SluiceError.self) { try await sink.upsert(big) }
        #expect(try await sink.count() == Self.corpus.count)
        try await Self.expectSameRanking(sink, "invoice total in CHF", Self.corpus)
        #expect(try await Self.keyword(sink, "word17").isEmpty)
    }

    @Test("terms: lower-cased letter and digit runs without stop words, plurals singular; CJK as overlapping pairs")
    func tokenizer() {
        #expect(
            KeywordTokenizer.terms(of: "The CHF-120 total, ÉTÉ x86_64!") == [
                "chf", "120", "total", "ete", "x86", "64",
            ]
        )
        #expect(
            KeywordTokenizer.terms(of: "What queries fix files? Bus class, status codes") == [
                "query", "fix", "file", "bus", "class", "status", "code",
            ]
        )
        #expect(KeywordTokenizer.terms(of: "東京都に住む") == ["東京", "京都", "都に", "に住", "住む"])
        #expect(KeywordTokenizer.terms(of: "price 价 ok") == ["price", "价", "ok"])
        #expect(KeywordTokenizer.terms(of: "한국어 텍스트") == ["한국어", "텍스트"])
    }
}
