import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local keyword index scores each row of a table chunk and each record of a JSON chunk as a text of its
/// own (KeywordIndex+Units.swift): its terms and length with the chunk's title (or file name) and headings,
/// against the index's statistics (idf over chunks, the average chunk length), a chunk scoring as its best
/// unit. A prose chunk scores as before; a replaced or deleted chunk's rows go with it; merges keep them.
@Suite struct KeywordRowsTests {
    typealias Keyword = LocalSinkKeywordTests

    /// A chunk of `units` (rows of a table, one a line; records of a JSON file, blank-line separated).
    static func chunk(_ id: String, _ units: [String], key: String, format: String) -> VectorRecord {
        var record = Keyword.record(id, units.joined(separator: format.hasPrefix("json") ? "\n\n" : "\n"), key: key)
        record.metadata["format"] = .string(format)
        return record
    }

    /// Benchmarks/retrieval `q060`: the answer is one row of a chunk of releases; the other rows dilute it, and
    /// a short prose chunk holding fewer of the query's words passed it (`faq`).
    static let releases: [VectorRecord] = [
        chunk(
            "releases",
            [
                "version: 2.2; codename: Potato; release: 2000-08-15; eol: 2003-06-30",
                "version: 3.0; codename: Woody; release: 2002-07-19; eol: 2006-06-30",
                "version: 3.1; codename: Sarge; release: 2005-06-06; eol: 2008-03-31",
                "version: 4.0; codename: Etch; release: 2007-04-08; eol: 2010-02-15",
                "version: 5.0; codename: Lenny; release: 2009-02-14; eol: 2012-02-06",
                "version: 6.0; codename: Squeeze; release: 2011-02-06; eol: 2014-05-31; eol lts: 2016-02-29",
                "version: 7; codename: Wheezy; release: 2013-05-04; eol: 2016-04-25; eol lts: 2018-05-31",
                "version: 8; codename: Jessie; release: 2015-04-25; eol: 2018-06-17; eol lts: 2020-06-30",
            ],
            key: "csv/debian-releases.csv",
            format: "csv"
        ),
        Keyword.record("faq", "Debian squeeze was released in 2011.", key: "faq.txt"),
        Keyword.record("news", "The less pager now has an LTS branch.", key: "NEWS"),
        Keyword.record("other", "Nothing about releases at all: a page on invoices and totals.", key: "other.txt"),
    ]

    static let query = "debian squeeze lts"

    @Test("a table chunk whose matching row is diluted by its other rows ranks first")
    func dilutedRowRanksFirst() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.releases)
        // Scored as one text, the chunk was below the short FAQ passage.
        let whole = Keyword.expectedRanking(Self.query, over: Self.releases)
        #expect(whole.first?.id == "faq")
        let hits = try await Keyword.keyword(sink, Self.query)
        #expect(hits.first?.record.id.rawValue == "releases")
        try await Self.expectRanking(sink, Self.query, Self.releases)
    }

    @Test("a record's units round-trip in its posting, and postings copy whole through a merge's filter")
    func unitPostingsRoundTrip() {
        var list = KeywordPostings()
        list.append(number: 3, frequency: 70, length: 300)
        list.append(number: 9, units: [(0, 1, 12), (4, 2, 200), (130, 1, 1 << 20)])
        list.append(number: 10, frequency: 1, length: 5)
        var read: [[Int]] = []
        KeywordPostings.forEach(stored: KeywordPostings.rebased(stored: list.stored, by: 1000)) {
            read.append([Int($0), $1, $2, $3])
        }
        #expect(
            read == [
                [1003, 0, 70, 300], [1009, 0, 1, 12], [1009, 4, 2, 200], [1009, 130, 1, 1 << 20], [1010, 0, 1, 5],
            ]
        )
        // A merge drops the dead numbers and copies the others' bytes.
        var kept = KeywordPostings()
        KeywordPostings.forEachPosting(stored: list.stored) { number, encoded in
            if number != 3 { kept.append(number: number, encoded: encoded) }
        }
        var direct = KeywordPostings()
        direct.append(number: 9, units: [(0, 1, 12), (4, 2, 200), (130, 1, 1 << 20)])
        direct.append(number: 10, frequency: 1, length: 5)
        #expect(kept.stored == direct.stored)
    }

    @Test("a prose chunk scores exactly as before, beside table and record chunks")
    func proseScoresAsBefore() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.releases + Self.currencies)
        let whole = Keyword.expectedRanking(Self.query, over: Self.releases + Self.currencies)
        let hits = try await Keyword.keyword(sink, Self.query, k: 100)
        for id in ["faq", "news"] {
            let hit = try #require(hits.first { $0.record.id.rawValue == id })
            let before = try #require(whole.first { $0.id == id })
            #expect(hit.score == Float(before.score), "\(id)")
        }
    }

    /// Benchmarks/retrieval `q183`: one currency record among several in a chunk of ISO 4217.
    static let currencies: [VectorRecord] = [
        chunk(
            "iso4217",
            [
                "$[\"4217\"][0].name: Sudanese Pound\n$[\"4217\"][0].alpha_3: SDG",
                "$[\"4217\"][1].name: Surinam Dollar\n$[\"4217\"][1].alpha_3: SRD",
                // A value holding a blank line stays in its record (the next line is not a path).
                "$[\"4217\"][2].name: Swedish Krona\n$[\"4217\"][2].note: used in Sweden\n\nsince 1873\n$[\"4217\"][2].alpha_3: SEK",
                "$[\"4217\"][3].name: Swiss Franc\n$[\"4217\"][3].alpha_3: CHF",
                "$[\"4217\"][4].name: Syrian Pound\n$[\"4217\"][4].alpha_3: SYP",
            ],
            key: "json/iso_4217.json",
            format: "json"
        ),
        chunk(
            "iso639",
            ["$[\"639-2\"][0].name: Swedish\n$[\"639-2\"][0].alpha_3: swe"],
            key: "json/iso_639-2.json",
            format: "json"
        ),
    ]

    @Test("a record of a JSON chunk scores on its own, a value's blank line kept inside its record")
    func recordsScoreOnTheirOwn() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.currencies + Self.releases)
        let hits = try await Keyword.keyword(sink, "swedish currency iso code sek")
        #expect(hits.first?.record.id.rawValue == "iso4217")
        try await Self.expectRanking(sink, "swedish currency iso code sek", Self.currencies + Self.releases)
        try await Self.expectRanking(sink, "swedish", Self.currencies + Self.releases)
        try await Self.expectRanking(sink, "since 1873 krona", Self.currencies + Self.releases)
    }

    @Test(
        "a chunk's units: rows by line, records at a blank line before a path, prose and single units whole",
        arguments: [
            ("csv", "a: 1\nb: 2\n\nc: 3", ["a: 1", "b: 2", "c: 3"]),
            ("tsv", "a: 1\n  \nb: 2", ["a: 1", "b: 2"]),
            ("xlsx", "# Sheet\n\na: 1; b: 2\na: 3; b: 4", ["# Sheet", "a: 1; b: 2", "a: 3; b: 4"]),
            ("ods", "a: 1\n", []),
            ("json", "$.a: x\n$.b: y\n\n$.c: z\n\nmore z\n\n\n$.d: w", ["$.a: x\n$.b: y", "$.c: z\nmore z", "$.d: w"]),
            ("jsonl", "$.a: x\n$.b: y", []),
            ("markdown", "a\nb\n\nc", []),
            ("", "a\nb", []),
        ]
    )
    func unitsOfAChunk(format: String, text: String, units: [String]) {
        var record = Keyword.record("u", text)
        if !format.isEmpty { record.metadata["format"] = .string(format) }
        // The units as texts (empty: scored whole).
        let found = KeywordIndex.units(of: record).map { $0.map { $0.joined(separator: "\n") } } ?? []
        #expect(found == units)
    }

    @Test("a replaced or deleted chunk's rows go with it, before and after its segment is merged")
    func replacedAndDeletedRowsGo() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let (sink, gate) = try KeywordMergesTests.openHeld(dir)
        try await sink.upsert(Self.releases)
        var records = Self.releases
        // The squeeze row goes; the chunk keeps its other rows.
        let replaced = Self.chunk(
            "releases",
            ["version: 2.2; codename: Potato; eol: 2003-06-30", "version: 3.0; codename: Woody; eol: 2006-06-30"],
            key: "csv/debian-releases.csv",
            format: "csv"
        )
        try await sink.upsert([replaced])
        records[0] = replaced
        try await Self.expectRanking(sink, Self.query, records)
        #expect(try await Keyword.keyword(sink, "wheezy").isEmpty)
        #expect(try await Keyword.keyword(sink, "woody").map(\.record.id.rawValue) == ["releases"])
        try await sink.delete([VectorID(rawValue: "releases")])
        records.removeFirst()
        #expect(try await Keyword.keyword(sink, "woody").isEmpty)
        try await Self.expectRanking(sink, Self.query, records)
        gate.signal()
        sink.settleKeywordMerges()
        #expect(try await Keyword.keyword(sink, "woody").isEmpty)
        try await Self.expectRanking(sink, Self.query, records)
    }

    @Test("merged segments keep each chunk's rows, and a rebuild gives the same")
    func mergesKeepRows() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let (sink, gate) = try KeywordMergesTests.openHeld(dir)
        var all: [VectorRecord] = []
        var generator = SplitMix64(seed: 0x0A31)
        // 20 writes of a table chunk and a prose chunk each: merged 8 at a time.
        for round in 0..<20 {
            let rows = (0..<(2 + round % 5)).map { row in
                "id: \(round)-\(row); words: \(KeywordMergesTests.text(&generator))"
            }
            let batch = [
                Self.chunk("t\(round)", rows, key: "csv/t.csv", format: "csv"),
                Keyword.record("p\(round)", KeywordMergesTests.text(&generator)),
            ]
            try await sink.upsert(batch)
            all += batch
        }
        // A few replaced with rows of other words, so that the merge drops dead postings too.
        for round in [1, 2, 3, 9] {
            let record = Self.chunk("t\(round)", ["refund: later", "tax: CHF refund"], key: "csv/t.csv", format: "csv")
            try await sink.upsert([record])
            all[all.firstIndex { $0.id == record.id }!] = record
        }
        let queries = ["invoice total CHF", "refund tax", "shipping date cent EUR", "id 3 refund"]
        for query in queries { try await Self.expectRanking(sink, query, all) }
        gate.signal()
        sink.settleKeywordMerges()
        #expect(try KeywordMergesTests.segments(sink).contains { $0.level > 0 })
        for query in queries { try await Self.expectRanking(sink, query, all) }
    }

    @Test("rows fold accents and match their file name and headings, as chunks do")
    func foldingAndFields() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        var sheet = Self.chunk(
            "sheet",
            ["# Currencies", "code: VES; name: Bolívar Soberano", "code: EUR; name: Euro", "code: CHF; name: Franc"],
            key: "currencies.xlsx",
            format: "xlsx"
        )
        sheet.metadata["headings"] = .strings(["Currencies"])
        sheet.metadata["title"] = .string("ISO 4217 list")
        let records = [sheet] + Self.releases
        try await sink.upsert(records)
        #expect(try await Keyword.keyword(sink, "bolivar").map(\.record.id.rawValue) == ["sheet"])
        #expect(try await Keyword.keyword(sink, "4217 list").map(\.record.id.rawValue) == ["sheet"])
        #expect(try await Keyword.keyword(sink, "wheezy potato").map(\.record.id.rawValue) == ["releases"])
        for query in ["bolivar currencies", "list euro", "debian wheezy", "currencies"] {
            try await Self.expectRanking(sink, query, records)
        }
        try await KeywordIndexFieldsTests.expectOwnTexts(sink, try await Keyword.keyword(sink, "currencies"), records)
    }

    @Test("a store indexed by chunks alone is ranked by rows in a scan read-only, and re-indexed on its next run")
    func chunkIndexIsRebuilt() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let records = Self.releases + Self.currencies
        do {
            let sink = try LocalSink(directory: dir)
            try await sink.upsert(records)
        }
        // What the index of the build before rows says of itself.
        do {
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let meta = try environment.database("meta")
            try environment.write { txn in
                try txn.put(
                    meta,
                    KeywordIndex.versionKey,
                    Array("bm25 tokenizer=3 layout=segments fields=text,title-or-name,headings terms=nfc".utf8)
                )
            }
        }
        do {
            let readOnly = try LocalSink(directory: dir, readOnly: true)
            try await Self.expectRanking(readOnly, Self.query, records)
            try await Self.expectRanking(readOnly, "swedish currency sek", records)
        }
        #expect(try await Keyword.prepareAndCheckBuilt(dir))
        let sink = try LocalSink(directory: dir)
        try await Self.expectRanking(sink, Self.query, records)
        try await Self.expectRanking(sink, "swedish currency sek", records)
    }

    // MARK: - The reference

    /// The ranking the index must give: BM25 (k1 1.2, b 0.75, Lucene's idf) with N, df and the average length
    /// over whole chunks (text, title or file name, headings), each chunk scored as its best unit, a unit
    /// being a row or record (as the test wrote it) with the chunk's title or name and headings.
    static func expectedRanking(_ query: String, over records: [VectorRecord]) -> [(id: String, score: Double)] {
        let terms = KeywordIndex.counts(of: query).terms.sorted()
        let contexts = records.map { KeywordIndex.context(of: $0) }
        let wholes = zip(records, contexts).map { KeywordIndex.counts(of: $0.text + "\n" + $1) }
        let n = Double(records.count)
        let average = max(1, Double(wholes.reduce(0) { $0 + $1.length }) / n)
        let idf = terms.map { term in
            let df = Double(wholes.filter { $0.frequency(of: term) != nil }.count)
            return log(1 + (n - df + 0.5) / (df + 0.5))
        }
        var ranking: [(id: String, score: Double)] = []
        for (record, context) in zip(records, contexts) {
            var format = ""
            if case .string(let named)? = record.metadata["format"] { format = named }
            let separator = format.hasPrefix("json") ? "\n\n$" : "\n"
            var units = [record.text]
            if ["csv", "tsv", "xlsx", "ods", "json", "jsonl"].contains(format) {
                units = record.text.components(separatedBy: separator).enumerated().map {
                    $0.offset > 0 && separator.hasSuffix("$") ? "$" + $0.element : $0.element
                }
            }
            var best: Double?
            for unit in units where !KeywordIndex.counts(of: unit).terms.isEmpty {
                let counts = KeywordIndex.counts(of: unit + "\n" + context)
                var score = 0.0
                var matched = false
                for (term, idf) in zip(terms, idf) {
                    guard let f = counts.frequency(of: term).map(Double.init) else { continue }
                    matched = true
                    score += idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * Double(counts.length) / average))
                }
                if matched { best = max(best ?? 0, score) }
            }
            if let best { ranking.append((record.id.rawValue, best)) }
        }
        return ranking.sorted { $0.score != $1.score ? $0.score > $1.score : $0.id < $1.id }
    }

    static func expectRanking(
        _ sink: LocalSink,
        _ query: String,
        _ records: [VectorRecord],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let hits = try await Keyword.keyword(sink, query, k: 100)
        let expected = expectedRanking(query, over: records)
        #expect(hits.map(\.record.id.rawValue) == expected.map(\.id), "\(query)", sourceLocation: sourceLocation)
        for (hit, want) in zip(hits, expected) {
            #expect(abs(Double(hit.score) - want.score) < 1e-4, "\(query)", sourceLocation: sourceLocation)
        }
    }
}
