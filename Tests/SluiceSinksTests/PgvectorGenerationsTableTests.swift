import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A sharded deployment's records of its index generations live in `<table>_generations`, a name PostgreSQL
/// would cut to 63 bytes (NAMEDATALEN) past 51 bytes of table name: a table of 63 bytes had its own name for
/// its generations table, and `CREATE TABLE IF NOT EXISTS` skipped it in silence. Against a real PostgreSQL.
@Suite(.serialized)
struct PgvectorGenerationsTableTests {
    /// The relations of the search path's schema whose names start with `prefix`, and their kinds.
    static func relations(_ sink: PgvectorSink, prefix: String) async throws -> [String: String] {
        try await sink.withConnection("relations") { connection in
            var out: [String: String] = [:]
            for row in try connection.query(
                """
                SELECT c.relname, c.relkind::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND starts_with(c.relname, $1) AND c.relkind IN ('r', 'v')
                """,
                [prefix]
            ) {
                out[row[0] ?? ""] = row[1] ?? ""
            }
            return out
        }
    }

    @Test("a table of 63 bytes keeps its generation records in a table of their own, within 63 bytes")
    func longTable() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let table = String(repeating: "q", count: 60) + "_zz"  // 63 bytes: `<table>_generations` was cut to it
        let sink = try PgvectorSink(settings: postgres.settings(table: table))
        try await PgvectorIndexNamesTests.load(sink)
        #expect(try await sink.writeSharedRecord("manifest", Data("one".utf8), expecting: 0))
        #expect(try await sink.writeSharedRecord("manifest", Data("two".utf8), expecting: 1))
        let record = try await sink.sharedRecord("manifest")
        #expect(record?.value == Data("two".utf8) && record?.version == 2, "\(String(describing: record))")
        #expect(try await sink.sharedRecords(prefix: "man") == ["manifest": Data("two".utf8)])

        let relations = try await Self.relations(sink, prefix: "qqq")
        let generations = PgvectorTableName(schema: nil, table: table).fitting("_generations")
        // The keyword index's length sums (`PgvectorSink+KeywordLengths`) are the table's own too.
        let lengths = PgvectorSink.keywordLengthsName(table: PgvectorTableName(schema: nil, table: table)).table
        #expect(
            relations == [table: "r", generations.name: "r", lengths: "r"],
            "the table, its own generations and its keyword lengths: \(relations)"
        )
        #expect(generations.name.utf8.count <= 63 && generations.name != table)
        // The vectors' table is untouched.
        let hits = try await sink.search(SearchRequest(mode: .keyword, text: "crane", k: 1))
        #expect(hits.map(\.record.id.rawValue) == ["a"])

        // Another deployment whose table's name shares the first 51 bytes keeps its records apart.
        let other = try PgvectorSink(settings: postgres.settings(table: String(repeating: "q", count: 60) + "_yy"))
        #expect(try await other.sharedRecord("manifest") == nil)
        #expect(try await other.writeSharedRecord("manifest", Data("theirs".utf8), expecting: 0))
        #expect(try await sink.sharedRecord("manifest")?.value == Data("two".utf8))
        try await other.deleteSharedRecords(prefix: "man")
        #expect(try await sink.sharedRecord("manifest")?.version == 2)
    }

    @Test(
        "first writes of one record at once: a conditional one wins or loses (false), an unconditional one writes, none fails"
    )
    func concurrentFirstWrites() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let sink = try PgvectorSink(settings: postgres.settings(table: "racing"))
        try await PgvectorIndexNamesTests.load(sink)
        for round in 0..<12 {
            // Seen failing: the second INSERT of a key failed with 23505 (sink-failed, exit 70) instead of
            // losing (a new shard's first run, started beside another, making the deployment's manifest).
            let key = "manifest-\(round)"
            let writers = try (0..<4).map { _ in try PgvectorSink(settings: postgres.settings(table: "racing")) }
            let won = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, writer) in writers.enumerated() {
                    group.addTask { try await writer.writeSharedRecord(key, Data("w\(index)".utf8), expecting: 0) }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(won == 1, "round \(round): \(won) conditional first writes won")
            #expect(try await sink.sharedRecord(key)?.version == 1)

            let part = "parts/g1/\(round)"
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, writer) in writers.enumerated() {
                    group.addTask { try await writer.writeSharedRecord(part, Data("p\(index)".utf8), expecting: nil) }
                }
                for try await written in group { #expect(written, "an unconditional write always writes") }
            }
            #expect(try await sink.sharedRecord(part)?.version == 4, "round \(round): every unconditional write")
        }
    }

    @Test(
        "generation records an older version kept under the name the server cut are read, then renamed: no second table"
    )
    func upgrade() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let table = String(repeating: "v", count: 55)
        let sink = try PgvectorSink(settings: postgres.settings(table: table))
        try await PgvectorIndexNamesTests.load(sink)
        let generations = PgvectorTableName(schema: nil, table: table).fitting("_generations")
        let legacy = try #require(generations.legacy)
        #expect(legacy == String((table + "_generations").prefix(63)))
        // As an older version left it: the records under the name the server cut.
        try await sink.withConnection("older name") { connection in
            let quoted = PgvectorTableName.quote(legacy)
            _ = try connection.query(
                "CREATE TABLE \(quoted) (key text PRIMARY KEY, value text NOT NULL, version bigint NOT NULL)"
            )
            _ = try connection.query("INSERT INTO \(quoted) VALUES ('manifest', 'old', 3), ('shard/1', 's', 1)")
        }
        let again = try PgvectorSink(settings: postgres.settings(table: table))
        #expect(try await again.sharedRecord("manifest") == SharedGenerationRecord(value: Data("old".utf8), version: 3))
        #expect(try await again.sharedRecords(prefix: "shard/") == ["shard/1": Data("s".utf8)])
        #expect(try await again.writeSharedRecord("manifest", Data("new".utf8), expecting: 3))
        let relations = try await Self.relations(again, prefix: "vvv")
        let lengths = PgvectorSink.keywordLengthsName(table: PgvectorTableName(schema: nil, table: table)).table
        #expect(
            relations == [table: "r", generations.name: "r", lengths: "r"],
            "renamed, not duplicated (and the table's keyword lengths): \(relations)"
        )
        #expect(try await again.sharedRecord("manifest") == SharedGenerationRecord(value: Data("new".utf8), version: 4))
        #expect(try await again.sharedRecords(prefix: "shard/") == ["shard/1": Data("s".utf8)])
    }
}
