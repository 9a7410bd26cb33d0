import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The keyword index holds each record's title and heading path besides its text (KeywordIndex+Fields):
/// a row filed under a sheet's name matches that name, while the stored text, search results and the
/// export keep the record's own text; a store indexed before (text only) is re-indexed on its next run.
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
        let texts = Dictionary(uniqueKeysWithValues: Self.sheet.map { ($0.id.rawValue, $0.text) })
        for hit in try await Keyword.keyword(sink, "countries 3166") {
            #expect(hit.record.text == texts[hit.record.id.rawValue])
            #expect(!hit.record.text.contains("3166"))
        }
        let exported = ExportCollector()
        try await sink.exportAll { exported.append($0) }
        #expect(exported.records.count == Self.sheet.count)
        for record in exported.records { #expect(record.text == texts[record.id.rawValue]) }
    }

    @Test("a store whose index holds the text alone is ranked by a scan read-only and re-indexed on its next run")
    func textOnlyIndexIsRebuilt() async throws {
        let dir = try await Self.sheetStore().directory
        defer { TemporaryDirectory.remove(dir) }
        // What the index of a build before the fields says of itself.
        do {
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let meta = try environment.database("meta")
            try environment.write { txn in
                try txn.put(meta, KeywordIndex.versionKey, Array("bm25 tokenizer=2 layout=segments".utf8))
            }
        }
        do {
            let readOnly = try LocalSink(directory: dir, readOnly: true)
            try await Self.expectSameRanking(readOnly, "countries numeric code 826", Self.sheet)
        }
        #expect(try await Keyword.prepareAndCheckBuilt(dir))
        try await Self.expectSameRanking(try LocalSink(directory: dir), "countries numeric code 826", Self.sheet)
    }

    /// A new store holding ``sheet``, and its folder (the caller removes it).
    static func sheetStore() async throws -> (sink: LocalSink, directory: URL) {
        let dir = Keyword.directory()
        let sink = try LocalSink(directory: dir)
        try await sink.upsert(Self.sheet)
        return (sink, dir)
    }

    /// The ranking must be BM25 over each record's text, title and headings, as if they were its text.
    static func expectSameRanking(_ sink: LocalSink, _ query: String, _ records: [VectorRecord]) async throws {
        let flattened = records.map { record in
            var parts = [record.text]
            if case .string(let title)? = record.metadata["title"] { parts.append(title) }
            if case .strings(let headings)? = record.metadata["headings"] { parts += headings }
            return Keyword.record(record.id.rawValue, parts.joined(separator: "\n"), key: record.documentKey)
        }
        try await Keyword.expectSameRanking(sink, query, flattened)
    }
}
