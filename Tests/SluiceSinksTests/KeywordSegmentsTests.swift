import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword index's segments: the postings' stored form, the merge policy, merges and rewrites under
/// churn, and the migration of a store written with the layout before segments.
@Suite struct KeywordSegmentsTests {
    typealias Keyword = LocalSinkKeywordTests

    @Test("postings round-trip, and two stored lists join by copying bytes")
    func postingsRoundTrip() {
        var a = KeywordPostings()
        a.append(number: 1, frequency: 2, length: 300)
        a.append(number: 200, frequency: 1, length: 7)
        var b = KeywordPostings()
        b.append(number: 100_000, frequency: 130, length: 1 << 20)
        b.append(number: 100_001, frequency: 1, length: 1)
        let lists = [a.stored, b.stored]
        var joined: [UInt8] = []
        lists[0].withUnsafeBufferPointer { first in
            lists[1].withUnsafeBufferPointer { second in
                KeywordPostings.appendJoined(2, { $0 == 0 ? first : second }, to: &joined)
            }
        }
        var read: [[Int]] = []
        KeywordPostings.forEach(stored: joined) { read.append([Int($0), $1, $2, $3]) }
        #expect(read == [[1, 0, 2, 300], [200, 0, 1, 7], [100_000, 0, 130, 1 << 20], [100_001, 0, 1, 1]])
        var offset = 0
        #expect(KeywordPostings.varint(joined, &offset) == 100_001, "the joined list's last number up front")
    }

    @Test(
        "a merge's join in place gives the bytes of its postings decoded and added again, units and empty lists included"
    )
    func joinedInPlace() {
        var generator = SplitMix64(seed: 0x4A0E)
        for _ in 0..<300 {
            var number: UInt64 = 0
            let lists: [[UInt8]] = (0..<(1 + Int(generator.next() % 8))).map { _ in
                var list = KeywordPostings()
                for _ in 0..<Int(generator.next() % 4) {  // none, at times: a list of its last number alone
                    number += 1 + generator.next() % (generator.next() % 2 == 0 ? 3 : 1 << 20)
                    if generator.next() % 3 == 0 {
                        let units = (0..<(1 + Int(generator.next() % 3))).map {
                            (
                                unit: $0 * 2, frequency: 1 + Int(generator.next() % 5),
                                length: Int(generator.next() % 900)
                            )
                        }
                        list.append(number: number, units: units)
                    } else {
                        list.append(
                            number: number,
                            frequency: 1 + Int(generator.next() % 200),
                            length: Int(generator.next() % 70_000)
                        )
                    }
                }
                return list.stored
            }
            // The reference decodes every posting and adds it again.
            var reference = KeywordPostings()
            for list in lists {
                KeywordPostings.forEachPosting(stored: list) { reference.append(number: $0, encoded: $1) }
            }
            var joined: [UInt8] = [0xEE]  // after what the array already holds
            let buffers = lists.map { list in
                let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: list.count)
                _ = buffer.initialize(from: list)
                return UnsafeBufferPointer(buffer)
            }
            defer { for buffer in buffers { buffer.deallocate() } }
            KeywordPostings.appendJoined(buffers.count, { buffers[$0] }, to: &joined)
            #expect(buffers.contains(where: KeywordPostings.hasPostings(stored:)) == !reference.isEmpty)
            #expect(joined == [0xEE] + reference.stored, "\(lists)")
        }
    }

    @Test("a batch's postings, built with numbers from 1, read from the store's next number once rebased")
    func rebasedPostings() {
        var list = KeywordPostings()
        list.append(number: 1, frequency: 2, length: 3)
        list.append(number: 5, frequency: 1, length: 200)
        var read: [[Int]] = []
        KeywordPostings.forEach(stored: KeywordPostings.rebased(stored: list.stored, by: 100_000)) {
            read.append([Int($0), $1, $2, $3])
        }
        #expect(read == [[100_001, 0, 2, 3], [100_005, 0, 1, 200]])
        #expect(KeywordPostings.rebased(stored: list.stored, by: 0) == list.stored)
        // The same bytes as a list built with the final numbers.
        var direct = KeywordPostings()
        direct.append(number: 100_001, frequency: 2, length: 3)
        direct.append(number: 100_005, frequency: 1, length: 200)
        #expect(KeywordPostings.rebased(stored: list.stored, by: 100_000) == direct.stored)
    }

    @Test("the policy merges the oldest run of segments of one level, within the byte bound, and rewrites worn ones")
    func mergePolicy() {
        let policy = KeywordMergePolicy(fanIn: 3, maxMergedBytes: 100)
        func segment(_ level: Int, bytes: Int = 10, records: Int = 8, dead: Int = 0) -> KeywordMergePolicy.Segment {
            .init(level: level, records: records, dead: dead, bytes: bytes)
        }
        #expect(policy.next([segment(1), segment(0), segment(0)]) == nil)
        #expect(policy.next([segment(1), segment(0), segment(0), segment(0)]) == 1..<4)
        #expect(policy.next([segment(1), segment(1), segment(1)]) == 0..<3)
        #expect(policy.next([segment(1, bytes: 60), segment(1, bytes: 30), segment(1, bytes: 30)]) == nil)
        #expect(policy.next([segment(2), segment(0, dead: 2), segment(0)]) == 1..<2)
        #expect(policy.next([segment(2), segment(0, dead: 1), segment(0)]) == nil)
        // Merges run behind the writes: more than fanIn new segments may wait, the oldest run goes first.
        #expect(policy.next([segment(1), segment(0), segment(0), segment(0), segment(0)]) == 1..<4)
        #expect(policy.next([segment(1, bytes: 90), segment(1), segment(1), segment(1), segment(1)]) == 1..<4)
        let behind = KeywordMergePolicy(fanIn: 3, maxMergedBytes: 100, maxWaiting: 2)
        #expect(!behind.isBehind([segment(1), segment(1), segment(1), segment(0), segment(0)]))
        #expect(behind.isBehind([segment(1), segment(0), segment(0), segment(0)]))
    }

    @Test("many small writes with replacements and deletes: merges keep the ranking of an index built afresh")
    func churnKeepsTheRanking() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        let words = ["invoice", "total", "tax", "refund", "shipping", "date", "page", "cent", "CHF", "EUR", "GBP"]
        var live: [String: VectorRecord] = [:]
        var generator = SplitMix64(seed: 7)
        for round in 0..<60 {
            var batch: [VectorRecord] = []
            for _ in 0..<(1 + Int(generator.next() % 6)) {
                let id = "r\(generator.next() % 40)"
                let text = (0..<(1 + Int(generator.next() % 12))).map { _ in
                    words[Int(generator.next() % UInt64(words.count))]
                }.joined(separator: " ")
                batch.append(Keyword.record(id, text))
            }
            try await sink.upsert(batch)
            for record in batch { live[record.id.rawValue] = record }
            if round % 5 == 4 {
                let gone = live.keys.sorted().prefix(3).map { VectorID(rawValue: $0) }
                try await sink.delete(gone)
                for id in gone { live[id.rawValue] = nil }
            }
        }
        // Merges run behind the writes. The sink's own environment is read: a second open of the files in
        // this process while the merge thread writes would re-initialize the lock file's mutexes under it.
        sink.settleKeywordMerges()
        let environment = sink.environment
        let segments = try environment.read { try KeywordIndex(environment: environment).load($0).segments }
        #expect(segments.count < 20, "merges bound the segments: \(segments.count)")
        let records = live.keys.sorted().compactMap { live[$0] }
        for query in ["invoice total", "refund GBP", "shipping date cent", "EUR", "tax tax page"] {
            try await Keyword.expectSameRanking(sink, query, records)
        }
        try await sink.delete(records.map(\.id))
        #expect(try await Keyword.keyword(sink, "invoice").isEmpty)
        sink.settleKeywordMerges()
        let emptied = try environment.read { try KeywordIndex(environment: environment).load($0) }
        #expect(emptied.segments.isEmpty)
        #expect(emptied.corpus == BM25.Corpus(documents: 0, terms: 0))
    }

    @Test("a store written with the layout before segments is migrated in one transaction, and ranks the same")
    func migratesTheOlderLayout() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        // What Sluice wrote before segments: a key `term 0x00 id` per posting, version "bm25 tokenizer=2".
        do {
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let vectors = try environment.database("vectors")
            let meta = try environment.database("meta")
            let postings = try environment.database(KeywordIndex.postingsDatabase)
            try environment.write { txn in
                var documents: UInt64 = 0
                var terms: UInt64 = 0
                for record in Keyword.corpus {
                    let id = Array(record.id.rawValue.utf8)
                    try txn.put(vectors, id, try LocalSink.encodeJSON(record))
                    let counts = KeywordIndex.counts(of: record.text)
                    for term in counts.terms {
                        let frequency = counts.frequency(of: term) ?? 0
                        var value: [UInt8] = []
                        for field in [UInt32(frequency), UInt32(counts.length)] {
                            withUnsafeBytes(of: field.littleEndian) { value += $0 }
                        }
                        try txn.put(postings, Array(term.utf8) + [0] + id, value)
                    }
                    documents += 1
                    terms += UInt64(counts.length)
                }
                var corpus: [UInt8] = []
                for field in [documents, terms] { withUnsafeBytes(of: field.littleEndian) { corpus += $0 } }
                try txn.put(meta, KeywordIndex.corpusKey, corpus)
                try txn.put(meta, KeywordIndex.versionKey, Array("bm25 tokenizer=2".utf8))
            }
        }
        do {
            // Read-only, before any write: ranked by a scan, with the same scores.
            let readOnly = try LocalSink(directory: dir, readOnly: true)
            try await Keyword.expectSameRanking(readOnly, "invoice total in CHF", Keyword.corpus)
        }
        let sink = try LocalSink(directory: dir)
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: 2))
        let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26, readOnly: true)
        _ = try environment.database("meta")
        let postings = try environment.database(KeywordIndex.postingsDatabase)
        let (built, keys) = try environment.read { txn in
            var keys: [[UInt8]] = []
            try txn.forEach(postings) { key, _ in
                keys.append(Array(key))
                return true
            }
            return (try KeywordIndex(environment: environment).isBuilt(txn), keys)
        }
        #expect(built)
        // Only the new layout's keys are left: each starts with segment 1's big-endian number.
        #expect(!keys.isEmpty)
        #expect(keys.allSatisfy { $0.starts(with: KeywordIndex.bigEndian(1)) })
        for query in ["invoice total in CHF", "shipping", "the cent page"] {
            try await Keyword.expectSameRanking(sink, query, Keyword.corpus)
        }
        try await sink.upsert([Keyword.record("e", "CHF only")])
        try await Keyword.expectSameRanking(sink, "invoice CHF", Keyword.corpus + [Keyword.record("e", "CHF only")])
    }

    @Test(
        "the ASCII and mixed tokenizers give the terms the character tokenizer gives",
        arguments: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
    )
    func asciiTokenizerMatches(seed: UInt64) {
        let pieces = [
            "The", "invoices", "CHF-120", "x86_64", "A", "an", "IS", "queries", "status", "class", "bus", "Fixes",
            "é", "\r\n", "\t", " ", ".", "?!", "0", "99", "users'", "o'clock", "ÉTÉ", "東京", "word",
            // Marks that extend the character before them (an ASCII letter, a space, a CR), Greek capitals
            // with a final sigma, a capital whose lower case is two scalars, joined and flag emoji, a
            // no-break space, ligatures, lone CR and LF, Devanagari, Hangul, Katakana next to ASCII.
            "e\u{301}", " \u{301}x", "\u{301}", "\r\u{301}", "a\u{200D}b", "ΟΔΟΣ", "Σ", "ΣΑΣ.", "İstanbul",
            "👨‍👩‍👧", "🇨🇭", "\u{00A0}", "straße", "ﬁle", "\r", "\n", "नमस्ते", "한국어", "カタカナabc", "x\u{0308}y",
        ]
        var generator = SplitMix64(seed: seed)
        for _ in 0..<500 {
            let text = (0..<Int(generator.next() % 30)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))]
            }
            .joined(separator: generator.next() % 2 == 0 ? " " : "")
            #expect(KeywordTokenizer.terms(of: text) == KeywordTokenizer.characterTerms(of: text), "\(text)")
        }
    }
}
