import Foundation
import SluiceCore
import Testing

/// The local store commits a large upsert in several write transactions of a bounded page count
/// (`sink.local_commit_pages`, `LocalCommitPlan`). A kill -9 between two of them leaves only whole documents
/// in the store — what a reader between the two commits sees — and the next run ends equal to a run that
/// was never killed.
@Suite("kill -9 between two commits of one upsert to the local store")
struct LocalCommitSplitCLITests {
    /// Document key → its vector ids, from `sluice export`.
    static func documents(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String: Set<String>] {
        let export = try await ws.export(target)
        var documents: [String: Set<String>] = [:]
        for line in String(decoding: export, as: UTF8.self).split(separator: "\n") {
            let record = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let key = try #require(record["document_key"] as? String)
            let id = try #require(record["id"] as? String)
            documents[key, default: []].insert(id)
        }
        return documents
    }

    @Test(
        "after a kill at the n-th commit the store holds whole documents only, and the next run converges",
        arguments: [1, 2, 3]
    )
    func killBetweenCommits(commit: Int) async throws {
        let ws = try Workspace("commit-split")
        defer { ws.cleanUp() }
        // 5–20 chunks a document (200-token chunks): a 24-page commit holds one to four whole documents.
        try Corpus.write(count: 16, into: ws.corpus, seed: 0x5B117, minBytes: 4_000, maxBytes: 9_000)
        let reference = ws.target("reference")
        try await ws.run(reference, expecting: 0)
        let expected = try await Self.documents(ws, reference)
        #expect(expected.count == 16)
        let largest = expected.values.map(\.count).max() ?? 0
        try #require(largest <= 24, "a document of \(largest) chunks would be split at 24 pages")

        let main = ws.target("main")
        let split = ["--set", "sink.local_commit_pages=24"]
        let crashed = try await ws.sluice(
            ws.runArguments(main, split),
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.upsert-committed@\(commit)"]
        )
        CrashWindowCLITests.expectKilled(crashed)
        let seen = try await Self.documents(ws, main)
        #expect(!seen.isEmpty && seen.count < expected.count, "killed after commit \(commit): \(seen.count) documents")
        for (key, ids) in seen {
            #expect(ids == expected[key], "\(key): \(ids.count) of \(expected[key]?.count ?? 0) records")
        }

        try await ws.run(main, split, expecting: 0)
        #expect(try await Self.documents(ws, main) == expected)
        try await LocalIndexCrashCLITests.expectSearchIsExact(ws, main, "after the next run")
    }
}
