import Foundation
import SluiceCore
import Testing

/// pgvector's keyword search where the `unaccent` extension cannot be created (docs/STORES.md, "Accents are
/// folded on pgvector"), end to end against a real PostgreSQL: a role without `CREATE` on the database
/// loads, `check` warns, keyword search works on `english` without folding and the run says so once; once an
/// administrator creates the extension, the next run makes the column again with folding, and only that run.
@Suite(.serialized)
struct PgvectorFoldingCLITests {
    static let notice = "keyword search does not fold accents"

    func keyword(_ ws: Workspace, _ target: Workspace.Target, _ query: String) async throws -> [String] {
        let result = try await ws.sluice(
            ["search", "--json", "-k", "3", "--mode", "keyword"] + target.arguments + ["--", query, ws.pipeline.path]
        )
        #expect(result.exitCode == 0, "\(result)")
        return try result.stdout.split(separator: "\n").map {
            let object = try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            return try #require(object?["document_key"] as? String)
        }
    }

    /// The `text_search` column's number: a column dropped and made again gets a new one.
    func columnNumber(_ store: StoreUnderTest, _ table: String) throws -> String {
        try store.sql(
            "SELECT attnum FROM pg_attribute WHERE attrelid = '\(table)'::regclass AND attname = 'text_search'"
        )
    }

    @Test(
        "a role that cannot create unaccent loads and searches on english, warned once; the next run after an administrator creates it folds"
    )
    func fallbackThenFolding() async throws {
        let ws = try Workspace("pg-fold")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x0F01_D000, maxBytes: 3_000)
        try Corpus.write(
            "Liberators\n\nSimón Bolívar led the campaigns of independence.\n",
            to: ws.corpus.appendingPathComponent("history/liberators.txt")
        )
        // A role with CREATE on the schema only: unaccent is a trusted extension, which needs CREATE on the
        // database (PUBLIC has CONNECT and TEMPORARY there). `vector` is made by the administrator.
        _ = try store.sql(
            """
            CREATE EXTENSION IF NOT EXISTS vector;
            CREATE ROLE plain LOGIN PASSWORD '\(StoreUnderTest.password)';
            GRANT CREATE, USAGE ON SCHEMA public TO plain
            """
        )
        var target = store.target(ws, "fold")
        target.sink = target.sink.map { $0.replacingOccurrences(of: "//postgres@", with: "//plain@") }
        #expect(target.sink.contains { $0.contains("//plain@") })

        let first = try await ws.run(target, expecting: 0)
        #expect(first.stderr.components(separatedBy: Self.notice).count - 1 == 1, "said once: \(first.stderr)")
        let check = try await ws.sluice(["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path])
        #expect(check.exitCode == 0, "\(check)")
        let warning = check.stdout.split(separator: "\n").filter {
            $0.split(separator: " ", maxSplits: 2).prefix(2) == ["warning", "store"]
        }
        #expect(warning.count == 1 && warning[0].contains(Self.notice), "\(check)")
        #expect(try await keyword(ws, target, "Bolívar").first == "history/liberators.txt")
        #expect(try await keyword(ws, target, "campaign liberator").first == "history/liberators.txt")  // stemmed
        #expect(try await keyword(ws, target, "bolivar").isEmpty, "english does not fold")
        let englishColumn = try columnNumber(store, "t_fold")

        // The administrator creates the extension: the next run folds, without a word about it.
        _ = try store.sql("CREATE EXTENSION unaccent")
        let second = try await ws.run(target, expecting: 0)
        #expect(!second.stderr.contains(Self.notice), "\(second.stderr)")
        #expect(try await keyword(ws, target, "bolivar").first == "history/liberators.txt")
        #expect(try await keyword(ws, target, "Bolívar").first == "history/liberators.txt")
        let foldedColumn = try columnNumber(store, "t_fold")
        #expect(foldedColumn != englishColumn, "the column was made again")
        let comment = try store.sql(
            "SELECT col_description('t_fold'::regclass, \(foldedColumn))"
        )
        #expect(comment.hasSuffix("configuration=sluice_english_unaccent"), "\(comment)")

        // Once: the run after keeps the column.
        let third = try await ws.run(target, expecting: 0)
        #expect(!third.stderr.contains(Self.notice), "\(third.stderr)")
        #expect(try columnNumber(store, "t_fold") == foldedColumn, "the column was not made again")
        let after = try await ws.sluice(["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path])
        #expect(after.exitCode == 0 && !after.stdout.contains(Self.notice), "\(after)")
    }
}
