import Foundation
import SluiceClient
import SluiceCore
import Testing

/// `GET /v1/export` under access control (docs/ACCESS.md): the operator's pages are `sluice export`'s
/// records; a restricted key's pages are exactly the records it may read, in full pages, with cursors and
/// counts that say nothing of the others.
extension ServeAccessCLITests {
    /// Every page of `client`'s export, `limit` at a time: each page full while a cursor follows, the last
    /// without one; every cursor names a record the caller was given.
    static func exportAll(
        _ client: SluiceClient,
        limit: Int,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [ExportedRecord] {
        var records: [ExportedRecord] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await client.export(cursor: cursor, limit: limit)
            records += page.records
            cursor = page.nextCursor
            pages += 1
            if let cursor {
                #expect(page.records.count == limit, "\(page.records.map(\.id))", sourceLocation: sourceLocation)
                let last = page.records.last.map { "\($0.ordinal):\($0.documentKey)" }
                #expect(cursor == last, "cursor \(cursor) after \(last ?? "nothing")", sourceLocation: sourceLocation)
            }
            #expect(page.skipped == 0, sourceLocation: sourceLocation)
        } while cursor != nil && pages <= 1000
        return records
    }

    /// The export as a restricted key sees it: the operator's records (the whole store, checked against
    /// `sluice export` by the caller) that any of `readers` may read, in key then ordinal order, without
    /// their readers.
    static func expectExport(
        _ client: SluiceClient,
        readers: Set<String>,
        all: [ExportedRecord],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var expected = all.filter { record in
            guard case .array(let names) = record.metadata["access"] else { return false }
            return names.contains { if case .string(let name) = $0 { readers.contains(name) } else { false } }
        }
        for index in expected.indices { expected[index].metadata["access"] = nil }
        for limit in [1, 2, 3] {
            let seen = try await exportAll(client, limit: limit, sourceLocation: sourceLocation)
            #expect(seen.map(\.id) == expected.map(\.id), "limit \(limit)", sourceLocation: sourceLocation)
            #expect(seen == expected, "limit \(limit)", sourceLocation: sourceLocation)
        }
    }

    /// The operator's export through the API holds the records `sluice export` writes (the same ids, keys,
    /// ordinals, texts, vectors and metadata), in document key (bytes) then ordinal order.
    static func expectOperatorExport(
        _ admin: SluiceClient,
        equals reference: [VectorRecord],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [ExportedRecord] {
        let all = try await exportAll(admin, limit: 7, sourceLocation: sourceLocation)
        let order = all.map { [$0.documentKey, String($0.ordinal)] }
        let sorted = order.sorted {
            $0[0] == $1[0] ? Int($0[1])! < Int($1[1])! : $0[0].utf8.lexicographicallyPrecedes($1[0].utf8)
        }
        #expect(order == sorted, sourceLocation: sourceLocation)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let decoded = try reference.map { try JSONDecoder().decode(ExportedRecord.self, from: encoder.encode($0)) }
        #expect(all.count == reference.count, sourceLocation: sourceLocation)
        #expect(Set(all) == Set(decoded), sourceLocation: sourceLocation)
        #expect(all.contains { $0.documentKey == "secret/board.md" }, sourceLocation: sourceLocation)
        return all
    }

    @Test("export through the API: the operator's is sluice export's; a key gets exactly its readable records")
    func exportIsRestricted() async throws {
        let ws = try Workspace("serve-access-export")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        // A readable document of several records, so that pages end inside a document.
        let long = (0..<40).map { "Section \($0) of the long design: the cache keeps entries for \($0) hours." }
        try Corpus.write(long.joined(separator: "\n\n"), to: ws.corpus.appendingPathComponent("eng/long.md"))
        try await ws.run(target, ["--set", "chunk.max_tokens=32"], expecting: 0)
        let server = try await Self.serve(ws, target, ["--set", "chunk.max_tokens=32"])
        let admin = server.client(token: Self.operatorToken)
        let all = try await Self.expectOperatorExport(admin, equals: Export.records(try await ws.export(target)))
        #expect(all.filter { $0.documentKey == "eng/long.md" }.count > 3, "\(all.map(\.documentKey))")
        try await Self.expectExport(server.client(token: Self.engKey), readers: ["eng", "emil", "*"], all: all)
        try await Self.expectExport(server.client(token: Self.hrKey), readers: ["hr", "hana", "*"], all: all)
        // The scope: a key without `export` is refused, whatever else it may do.
        let auth = ["Authorization": "Bearer \(Self.searchOnlyKey)"]
        let refused = try await server.exchange("GET", "/v1/export", headers: auth)
        #expect(refused.status == 403 && ServeProcess.errorCode(refused.body) == "forbidden")
        // A cursor is only ever a record the caller was given; bad parameters are a 400.
        let engAuth = ["Authorization": "Bearer \(Self.engKey)"]
        for query in ["limit=0", "limit=1001", "cursor=x", "cursor=-1:a", "page=2"] {
            let bad = try await server.exchange("GET", "/v1/export?\(query)", headers: engAuth)
            #expect(bad.status == 400 && ServeProcess.errorCode(bad.body) == "usage", "\(query)")
        }
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result.stderr.suffix(2000))")
    }
}
