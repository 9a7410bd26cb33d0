import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sluice search --filter` end to end: the filter reaches the store (the local store and pgvector,
/// each applying it itself), a store that cannot express a filter refuses it, and bad syntax exits 1.
@Suite(.serialized)
struct FilterCLITests {
    static func lines(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    @Test("search --filter on the local store and on pgvector: k results, every one matching the filter")
    func filteredSearch() async throws {
        let ws = try Workspace("filter-cli")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 12, into: ws.corpus, seed: 0x0F17_7E25)
        let folder = String(try #require(keys.last?.split(separator: "/").first)) + "/"
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        let local = ws.target("local")
        let main = store.target(ws, "main")
        try await ws.run(local, expecting: 0)
        try await ws.run(main, expecting: 0)
        for (name, target) in [("local", local), ("pgvector", main)] {
            let filters = [
                "document_key ^= \"\(folder)\" and offset > 0",
                #"{"document_key": {"$prefix": "\#(folder)"}, "offset": {"$gt": 0}}"#,
            ]
            for filter in filters {
                let result = try await ws.sluice(
                    [
                        "search", "the river and the sea", "--json", "--no-collapse", "-k", "4", "--filter", filter,
                        ws.pipeline.path,
                    ] + target.arguments
                )
                #expect(result.exitCode == 0, "\(name): \(result)")
                let hits = try Self.lines(result.stdout)
                #expect(hits.count == 4, "\(name): \(filter): \(result.stdout)")
                for hit in hits {
                    #expect((hit["document_key"] as? String)?.hasPrefix(folder) == true, "\(name): \(hit)")
                    let offset = (hit["metadata"] as? [String: Any])?["offset"] as? Int
                    #expect((offset ?? 0) > 0, "\(name): \(hit)")
                }
            }
            let bad = try await ws.sluice(
                ["search", "x", "--filter", "page >= ", ws.pipeline.path] + target.arguments
            )
            #expect(bad.exitCode == 1, "\(name): \(bad)")
            #expect(bad.stderr.contains("filter:"), "\(name): \(bad.stderr)")
        }
    }

    @Test("a filter a store cannot express exits 1 naming the store and the construct (Qdrant: a prefix)")
    func refusedFilter() async throws {
        let ws = try Workspace("filter-cli-refused")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 3, into: ws.corpus, seed: 0x0F17_7E26)
        let store = try await StoreUnderTest.start(.qdrant, in: ws)
        defer { store.stop() }
        let main = store.target(ws, "main")
        try await ws.run(main, expecting: 0)
        let refused = try await ws.sluice(
            ["search", "x", "--filter", "document_key ^= \"doc\"", ws.pipeline.path] + main.arguments
        )
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("qdrant cannot filter on document_key ^= \"doc\""), "\(refused.stderr)")
        let folder = try await ws.sluice(
            ["search", "x", "--json", "--filter", "document_key ^= \"no-such-folder/\"", ws.pipeline.path]
                + main.arguments
        )
        #expect(folder.exitCode == 0, "\(folder)")
        #expect(folder.stdout.isEmpty, "\(folder.stdout)")
    }
}
