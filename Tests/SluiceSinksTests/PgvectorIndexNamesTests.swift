import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// PostgreSQL keeps 63 bytes of an identifier (NAMEDATALEN): `<table>_embedding_hnsw`, `<table>_text_search`
/// and `<table>_document_key` of a long table were cut to one name, or to the name of a generation's table
/// itself, and `CREATE INDEX IF NOT EXISTS` then skipped the others in silence. Against a real PostgreSQL.
@Suite(.serialized)
struct PgvectorIndexNamesTests {
    static let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)

    /// The indexes of `table` (unquoted, in the search path's schema), by name, with their definitions.
    static func indexes(_ sink: PgvectorSink, _ table: String) async throws -> [String: String] {
        try await sink.withConnection("indexes") { connection in
            var out: [String: String] = [:]
            for row in try connection.query(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1",
                [table]
            ) {
                out[row[0] ?? ""] = row[1] ?? ""
            }
            return out
        }
    }

    static func load(_ sink: PgvectorSink) async throws {
        try await sink.prepare(embedder: identity)
        try await sink.upsert([VectorRecord.onPageOne("a", "harbour crane", [1, 0, 0, 0])])
        try await sink.finish()
    }

    /// Whether `indexes` holds one of each kind Sluice makes (and the primary key's).
    static func complete(_ indexes: [String: String]) -> Bool {
        let definitions = Array(indexes.values)
        return indexes.count == 4 && definitions.contains { $0.contains("USING hnsw") }
            && definitions.contains { $0.contains("USING gin") }
            && definitions.contains { $0.contains("(document_key)") }
            && indexes.keys.allSatisfy { $0.utf8.count <= 63 }
    }

    @Test("a table of 62 bytes and a generation's table of 63 get every index, each its own name")
    func longNames() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let long = String(repeating: "t", count: 59) + "_xy"  // 62 bytes: `<table>_` was every index's name
        let sink = try PgvectorSink(settings: postgres.settings(table: long))
        try await Self.load(sink)
        let own = try await Self.indexes(sink, long)
        #expect(Self.complete(own), "\(own)")

        let base = String(repeating: "c", count: 60)
        let candidate = PgvectorSink.table(base, adding: "_g2")  // 63 bytes: its indexes were cut to its name
        let first = try PgvectorSink(settings: postgres.settings(table: base))
        try await Self.load(first)
        let second = try PgvectorSink(settings: postgres.settings(table: candidate))
        try await Self.load(second)
        let baseIndexes = try await Self.indexes(first, base)
        let candidateIndexes = try await Self.indexes(second, candidate)
        #expect(Self.complete(baseIndexes), "\(baseIndexes)")
        #expect(Self.complete(candidateIndexes), "\(candidateIndexes)")
        #expect(Set(baseIndexes.keys).isDisjoint(with: candidateIndexes.keys))
        let info = try await second.info()
        #expect(info.details["hnsw index"].map { candidateIndexes[$0] != nil } == true, "\(info.details)")
    }

    @Test("a table whose indexes were named by an older version keeps them, renamed: no second index")
    func upgrade() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let table = String(repeating: "u", count: 55)
        let sink = try PgvectorSink(settings: postgres.settings(table: table))
        try await Self.load(sink)
        // As an older version left it: each index under its name cut to 63 bytes by the server.
        try await sink.withConnection("older names") { connection in
            for row in try connection.query(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = $1",
                [table]
            ) where !(row[0] ?? "").hasSuffix("_pkey") {
                _ = try connection.query("DROP INDEX \(PgvectorTableName.quote(row[0] ?? ""))")
            }
            let quoted = PgvectorTableName.quote(table)
            let hnsw = PgvectorTableName.quote(String((table + "_embedding_hnsw").prefix(63)))
            let gin = PgvectorTableName.quote(String((table + "_text_search").prefix(63)))
            let key = PgvectorTableName.quote(String((table + "_document_key").prefix(63)))
            _ = try connection.query("CREATE INDEX \(hnsw) ON \(quoted) USING hnsw (embedding vector_cosine_ops)")
            _ = try connection.query("CREATE INDEX \(gin) ON \(quoted) USING gin (text_search)")
            _ = try connection.query("CREATE INDEX \(key) ON \(quoted) (document_key)")
        }
        let again = try PgvectorSink(settings: postgres.settings(table: table))
        try await Self.load(again)
        let indexes = try await Self.indexes(again, table)
        #expect(Self.complete(indexes), "one of each, none twice: \(indexes)")
        let name = try #require(PgvectorTableName(parsing: table))
        for suffix in ["_embedding_hnsw", "_text_search"] {
            let renamed = PgvectorIndexName(table: name, suffix: suffix)
            #expect(renamed.legacy != nil && indexes[renamed.name] != nil, "\(suffix) renamed: \(indexes)")
        }
        let keyword = try await again.search(SearchRequest(mode: .keyword, text: "crane", k: 1))
        #expect(keyword.map(\.record.id.rawValue) == ["a"])
    }
}
