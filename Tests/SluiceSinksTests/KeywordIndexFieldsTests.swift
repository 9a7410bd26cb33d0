import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword index holds each record's title (or, without one, its document's file name) and heading path
/// besides its text (KeywordIndex+Fields): a row filed under a sheet's name matches that name, while the
/// stored text, search results and the export keep the record's own text; a store indexed before (text only,
/// or the title without the file name) is re-indexed on its next run.
@Suite struct KeywordIndexFieldsTests {
    typealias Keyword = LocalSinkKeywordTests

    static func row(_ id: String, _ text: String, headings: [String], title: String? = nil) -> VectorRecord {
        var record = Keyword.record(id, text, key: "countries.xlsx")
        record.metadata["headings"] = .strings(headings)
        if let title { record.metadata["title"] = .string(title) }
        return record
    }

    /// A sheet cut into chunks: only the first holds the sheet's name in its text (the section's heading),
    /// the others have it in their heading path alone.
    static let sheet = [
        row("r0", "# Countries\nAlpha-2 code: AW; Numeric code: 533; Name: Aruba", headings: ["Countries"]),
        row(
            "r1",
            "Alpha-2 code: GB; Numeric code: 826; Name: United Kingdom",
            headings: ["Countries"],
            title: "ISO 3166-1"
        ),
        row("r2", "Alpha-2 code: FR; Numeric code: 250; Name: France", headings: ["Countries"], title: "ISO 3166-1"),
        Keyword.record("n", "The numeric code of a language is not a country code at all."),
    ]

    @Test("a row whose sheet name is only in its heading path matches it, and ranks by its own words first")
    func headingPathIsIndexed() async throws {
        let (sink, dir) = try await Self.sheetStore()
        defer { TemporaryDirectory.remove(dir) }
        // Without the heading path in the index, "countries" matched r0 and n ("country") alone.
        let countries = Set(try await Keyword.keyword(sink, "countries").map(\.record.id.rawValue))
        #expect(countries == ["r0", "r1", "r2", "n"])
        let hits = try await Keyword.keyword(sink, "countries numeric code 826")
        #expect(hits.first?.record.id.rawValue == "r1")
        #expect(Set(hits.map(\.record.id.rawValue)) == ["r0", "r1", "r2", "n"])
        // The title's words too, for every chunk of its document.
        #expect(Set(try await Keyword.keyword(sink, "3166").map(\.record.id.rawValue)) == ["r1", "r2"])
        try await Self.expectSameRanking(sink, "countries numeric code 826", Self.sheet)
    }

    @Test("the title and headings stay out of the stored text, the search results and the export")
    func storedTextIsTheRecordsOwn() async throws {
        let (sink, dir) = try await Self.sheetStore()
        defer { TemporaryDirectory.remove(dir) }
        let hits = try await Keyword.keyword(sink, "countries 3166")
        #expect(!hits.isEmpty)
        for hit in hits { #expect(!hit.record.text.contains("3166")) }
        try await Self.expectOwnTexts(sink, hits, Self.sheet)
    }

    @Test(
        "a store indexed by an earlier build is ranked by a scan read-only and re-indexed on its next run",
        arguments: [
            "bm25 tokenizer=2 layout=segments",  // the text alone
            "bm25 tokenizer=2 layout=segments fields=text,title,headings",  // no file name for an untitled document
            // terms as the first-met form of equal strings, not composed bytes
            "bm25 tokenizer=2 layout=segments fields=text,title-or-name,headings",
            // Latin letters not folded to their base letters (KeywordTokenizer+Folding.swift)
            "bm25 tokenizer=2 layout=segments fields=text,title-or-name,headings terms=nfc",
            // a key a term in each segment, not blocks of terms (KeywordSegmentBlocks.swift)
            "bm25 tokenizer=3 layout=segments fields=text,title-or-name,headings terms=nfc units=rows,records",
        ]
    )
    func earlierIndexIsRebuilt(version: String) async throws {
        let dir = try await Self.sheetStore().directory
        defer { TemporaryDirectory.remove(dir) }
        // What the index of an earlier build says of itself (its postings are this build's, so only a rebuild
        // that follows the version, not the postings, makes the run below re-index).
        do {
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let meta = try environment.database("meta")
            try environment.write { txn in
                try txn.put(meta, KeywordIndex.versionKey, Array(version.utf8))
            }
            #expect(try environment.read { try !KeywordIndex(environment: environment).isBuilt($0) })
        }
        do {
            let readOnly = try LocalSink(directory: dir, readOnly: true)
            try await Self.expectSameRanking(readOnly, "countries numeric code 826", Self.sheet)
        }
        #expect(try await Keyword.prepareAndCheckBuilt(dir))
        try await Self.expectSameRanking(try LocalSink(directory: dir), "countries numeric code 826", Self.sheet)
    }

    /// Rows of a CSV file have no title: the file's name stands for it, so `debian-releases.csv`'s rows match
    /// "Debian" though no row says it (Benchmarks/retrieval `q139`: *when did Debian potato stop being supported*).
    static let releases = [
        Keyword.record(
            "potato",
            "version: 2.2; codename: Potato; series: potato; eol: 2003-06-30",
            key: "csv/debian-releases.csv"
        ),
        Keyword.record("woody", "version: 3.0; codename: Woody; eol: 2006-06-30", key: "csv/debian-releases.csv"),
        Keyword.record("policy", "Debian has supported Python 3 alone since bullseye.", key: "text/policy.txt"),
        Keyword.record("faq", "Q. Which release am I running?", key: "https://example.org/debian/faq.html?lang=en"),
        {
            var titled = Keyword.record("titled", "A record whose title names it.", key: "pdf/debian-manual.pdf")
            titled.metadata["title"] = .string("Installation Guide")
            return titled
        }(),
    ]

    @Test("a record of a document without a title matches its file name, kept out of its text and the export")
    func fileNameStandsForAMissingTitle() async throws {
        let dir = Keyword.directory()
        defer { TemporaryDirectory.remove(dir) }
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.releases)
        // "debian": the policy's own word, and the CSV rows' file name; not the titled PDF's file name.
        #expect(
            Set(try await Keyword.keyword(sink, "debian").map(\.record.id.rawValue)) == ["potato", "woody", "policy"]
        )
        #expect(Set(try await Keyword.keyword(sink, "faq").map(\.record.id.rawValue)) == ["faq"])
        #expect(Set(try await Keyword.keyword(sink, "lang html").map(\.record.id.rawValue)).isEmpty)
        #expect(Set(try await Keyword.keyword(sink, "installation").map(\.record.id.rawValue)) == ["titled"])
        let hits = try await Keyword.keyword(sink, "when did debian potato stop being supported")
        #expect(hits.first?.record.id.rawValue == "potato")
        try await Self.expectSameRanking(sink, "when did debian potato stop being supported", Self.releases)
        try await Self.expectOwnTexts(sink, hits, Self.releases)
    }

    @Test(
        "a document's name is its key's last path component without the extension",
        arguments: [
            ("csv/debian-releases.csv", "debian-releases"),
            ("https://example.org/debian/faq.html?lang=en#top", "faq"),
            ("notes/README", "README"),
            ("dotfiles/.profile", ".profile"),
            ("archive.tar.gz", "archive.tar"),
            ("https://example.org/docs/", ""),
            // A separator is its byte, as the file system reads it, even with a combining mark after it.
            ("docs/\u{301}x.txt", "\u{301}x"),
        ]
    )
    func documentName(key: String, name: String) {
        #expect(KeywordIndex.name(of: key) == name)
    }

    @Test(
        "a document's name read from the key's bytes is the one read by characters, on random keys (no mark after a separator)"
    )
    func documentNameByBytes() {
        // The name as it was read by `Character` before.
        func byCharacters(_ documentKey: String) -> String {
            var key = Substring(documentKey)
            if let query = key.firstIndex(where: { $0 == "?" || $0 == "#" }) { key = key[..<query] }
            let last = key.split(separator: "/", omittingEmptySubsequences: false).last ?? key
            guard let dot = last.lastIndex(of: "."), dot != last.startIndex else { return String(last) }
            return String(last[..<dot])
        }
        let pieces = ["a", "é", "e\u{301}", "数据", "/", ".", "?", "#", "x.y", "..", "🇫🇷", " ", "-"]
        var generator = SplitMix64(seed: 0x4E41)
        for _ in 0..<5_000 {
            let key = (0..<Int(generator.next() % 9)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }
                .joined()
            #expect(KeywordIndex.name(of: key) == byCharacters(key), "\(key)")
        }
    }

    /// Every hit and every exported record must carry its own text, as `records` gave it, and nothing else.
    static func expectOwnTexts(_ sink: LocalSink, _ hits: [SearchHit], _ records: [VectorRecord]) async throws {
        let texts = Dictionary(uniqueKeysWithValues: records.map { ($0.id.rawValue, $0.text) })
        for hit in hits { #expect(hit.record.text == texts[hit.record.id.rawValue]) }
        let exported = ExportCollector()
        try await sink.exportAll { exported.append($0) }
        #expect(exported.records.count == records.count)
        for record in exported.records { #expect(record.text == texts[record.id.rawValue]) }
    }

    /// A new store holding ``sheet``, and its folder (the caller removes it).
    static func sheetStore() async throws -> (sink: LocalSink, directory: URL) {
        let dir = Keyword.directory()
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.sheet)
        return (sink, dir)
    }

    /// The ranking must be BM25 over each record's text, title (or file name) and headings, as if they were its
    /// text; each once.
    static func expectSameRanking(_ sink: LocalSink, _ query: String, _ records: [VectorRecord]) async throws {
        let flattened = records.map { record in
            var parts = [record.text]
            if case .string(let title)? = record.metadata["title"] {
                parts.append(title)
            } else {
                parts.append(KeywordIndex.name(of: record.documentKey))
            }
            if case .strings(let headings)? = record.metadata["headings"] { parts += headings }
            var seen: Set<String> = []
            parts = [parts[0]] + parts.dropFirst().filter { seen.insert($0).inserted }
            // A key that names nothing, so that the flattened record's text is all the index holds of it.
            return Keyword.record(record.id.rawValue, parts.joined(separator: "\n"), key: "/")
        }
        try await Keyword.expectSameRanking(sink, query, flattened)
    }
}
