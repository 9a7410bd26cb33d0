import Foundation
import SluiceCore
import Testing

/// `sluice search --mode keyword|hybrid` end to end on the local store and pgvector, and the local
/// store's keyword index after a kill -9 inside its write transaction.
@Suite(.serialized)
struct SearchModesCLITests {
    /// A corpus of sample prose with one document holding a rare code.
    static func writeCorpus(_ ws: Workspace) throws {
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x5EA7_C400, maxBytes: 6_000)
        try Corpus.write(
            "Fees\n\nThe monthly fee is 45 CHF, billed in advance under contract code QX-7731.\n",
            to: ws.corpus.appendingPathComponent("billing/fees.txt")
        )
    }

    static func results(_ output: String) throws -> [[String: Any]] {
        try output.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    func search(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ query: String,
        _ extra: [String]
    ) async throws
        -> CommandResult
    {
        try await ws.sluice(
            ["search", "--json", "-k", "5"] + extra + target.arguments + ["--", query, ws.pipeline.path]
        )
    }

    func expectModes(_ ws: Workspace, _ target: Workspace.Target, _ label: String) async throws {
        let keyword = try await search(ws, target, "what is the fee in CHF", ["--mode", "keyword"])
        #expect(keyword.exitCode == 0, "\(label): \(keyword)")
        let keywordResults = try Self.results(keyword.stdout)
        #expect(keywordResults.first?["document_key"] as? String == "billing/fees.txt", "\(label): \(keyword.stdout)")
        #expect(keywordResults.first?["keyword_score"] is Double, "\(label)")

        let hybrid = try await search(ws, target, "contract code QX-7731", ["--mode", "hybrid"])
        #expect(hybrid.exitCode == 0, "\(label): \(hybrid)")
        let hybridResults = try Self.results(hybrid.stdout)
        #expect(hybridResults.count == 5, "\(label)")
        #expect(
            hybridResults.prefix(3).contains { $0["document_key"] as? String == "billing/fees.txt" },
            "\(label): \(hybrid.stdout)"
        )
        #expect(hybridResults.allSatisfy { $0["vector_score"] is Double }, "\(label)")
        // A filter applies while ranking: every result is under notes/ (most top records are not).
        let filtered = try await search(
            ws,
            target,
            "file data system use page line time",
            ["--mode", "keyword", "--filter", "document_key ^= \"notes/\""]
        )
        #expect(filtered.exitCode == 0, "\(label): \(filtered)")
        let keys = try Self.results(filtered.stdout).compactMap { $0["document_key"] as? String }
        #expect(keys.count == 5 && keys.allSatisfy { $0.hasPrefix("notes/") }, "\(label): \(keys)")

        // Hybrid is the default where the store has keyword search.
        let byDefault = try await search(ws, target, "contract code QX-7731", [])
        #expect(
            try Self.results(byDefault.stdout).map { $0["id"] as? String } == hybridResults.map { $0["id"] as? String }
        )
    }

    @Test("keyword and hybrid search through the CLI on the local store, with a filter applied while ranking")
    func localStore() async throws {
        let ws = try Workspace("search-modes-local")
        defer { ws.cleanUp() }
        try Self.writeCorpus(ws)
        let target = ws.target("local")
        try await ws.run(target, expecting: 0)
        try await expectModes(ws, target, "local")
    }

    @Test("keyword and hybrid search through the CLI on pgvector, with a filter in the SQL")
    func pgvector() async throws {
        let ws = try Workspace("search-modes-pg")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        try Self.writeCorpus(ws)
        let target = store.target(ws, "main")
        try await ws.run(target, expecting: 0)
        try await expectModes(ws, target, "pgvector")
    }

    @Test("--fusion score|rrf through the CLI: a rare code first, RRF's scores rank sums, search.fusion the default")
    func fusion() async throws {
        let ws = try Workspace("search-fusion")
        defer { ws.cleanUp() }
        try Self.writeCorpus(ws)
        let target = ws.target("local")
        try await ws.run(target, expecting: 0)
        let query = "contract code QX-7731"
        let score = try await search(ws, target, query, ["--fusion", "score"])
        #expect(score.exitCode == 0, "\(score)")
        let scored = try Self.results(score.stdout)
        #expect(scored.first?["document_key"] as? String == "billing/fees.txt", "\(score.stdout)")
        let scores = scored.compactMap { $0["score"] as? Double }
        #expect(scores.count == 5 && scores.allSatisfy { (0...1).contains($0) } && scores == scores.sorted(by: >))
        // The default is score fusion.
        let byDefault = try await search(ws, target, query, [])
        #expect(try Self.results(byDefault.stdout).map { $0["id"] as? String } == scored.map { $0["id"] as? String })

        let rrf = try await search(ws, target, query, ["--fusion", "rrf"])
        #expect(rrf.exitCode == 0, "\(rrf)")
        let ranked = try Self.results(rrf.stdout)
        // Σ 1/(10 + rank) over two rankings: at most 2/11.
        #expect(ranked.compactMap { $0["score"] as? Double }.allSatisfy { $0 <= 2.0 / 11 + 1e-9 }, "\(rrf.stdout)")
        // The pipeline's search.fusion (and its parameter) is what a query naming no rule gets.
        let configured = try await search(
            ws,
            target,
            query,
            ["--set", "search.fusion=rrf", "--set", "search.rrf_k=10"]
        )
        #expect(configured.stdout == rrf.stdout)
        let sixty = try await search(ws, target, query, ["--set", "search.rrf_k=60", "--fusion", "rrf"])
        let sixtyScores = try Self.results(sixty.stdout).compactMap { $0["score"] as? Double }
        #expect(!sixtyScores.isEmpty && sixtyScores.allSatisfy { $0 <= 2.0 / 61 + 1e-9 })

        let unknown = try await search(ws, target, query, ["--fusion", "rank"])
        #expect(unknown.exitCode == 1 && unknown.stderr.contains("--fusion must be one of score, rrf"), "\(unknown)")
    }

    /// The crash point sits inside a keyword merge's write transaction, on the store's merge thread, after the
    /// merged segment and the directory were written: the kill leaves the merge's inputs, which searches read
    /// as before, and the resumed run merges again. Small writes (`sink.batch=2`) give the run many segments.
    @Test("kill -9 inside a keyword merge: after resuming, keyword search equals a fresh run's")
    func crashInsideAKeywordMerge() async throws {
        let ws = try Workspace("search-modes-merge-crash")
        defer { ws.cleanUp() }
        try Self.writeCorpus(ws)
        let small = ["--set", "sink.batch=2"]
        let crashed = ws.target("crashed")
        let killed = try await ws.sluice(
            ws.runArguments(crashed, small),
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.keyword-merge-written@2"]
        )
        #expect(killed.signaled, "\(killed)")
        try await ws.run(crashed, small, expecting: 0)
        let fresh = ws.target("fresh")
        try await ws.run(fresh, small, expecting: 0)
        for query in ["what is the fee in CHF", "the data and the file", "compression level"] {
            let after = try await search(ws, crashed, query, ["--mode", "keyword", "--no-collapse"])
            let expected = try await search(ws, fresh, query, ["--mode", "keyword", "--no-collapse"])
            #expect(after.exitCode == 0, "\(after)")
            #expect(after.stdout == expected.stdout, "\(query)")
        }
    }

    /// The crash point sits inside the local store's write transaction, after a record's postings were
    /// written and before its vector is: the kill -9 leaves an uncommitted transaction, which LMDB drops.
    /// Checked against a mutant that commits the postings in a transaction of their own before the vectors'
    /// (the kill then falls between the two): this test failed on it, the keyword scores after resuming
    /// differing from a fresh run's.
    @Test("kill -9 inside the local store's write transaction: after resuming, keyword search equals a fresh run's")
    func crashInsideTheWriteTransaction() async throws {
        let ws = try Workspace("search-modes-crash")
        defer { ws.cleanUp() }
        try Self.writeCorpus(ws)
        let crashed = ws.target("crashed")
        let killed = try await ws.sluice(
            ws.runArguments(crashed),
            environment: ["SLUICE_DEBUG_CRASH_AT": "local.keywords-written@10"]
        )
        #expect(killed.signaled, "\(killed)")
        try await ws.run(crashed, expecting: 0)
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        for query in ["what is the fee in CHF", "the data and the file", "compression level"] {
            let after = try await search(ws, crashed, query, ["--mode", "keyword", "--no-collapse"])
            let expected = try await search(ws, fresh, query, ["--mode", "keyword", "--no-collapse"])
            #expect(after.exitCode == 0, "\(after)")
            #expect(after.stdout == expected.stdout, "\(query)")
        }
    }
}
