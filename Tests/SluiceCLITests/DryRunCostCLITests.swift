import Foundation
import SluiceCore
import Testing

/// `sluice run --dry-run` says what the run would cost the embedder (issue 32: a candidate generation's
/// dry run says how many documents and tokens it will cost, and what that costs at a given price): the
/// estimate, made from the extraction and embedding caches, equals what the run then sends.
@Suite(.serialized)
struct DryRunCostCLITests {
    /// `to embed: T tokens in C chunks of D documents (K chunks from the embedding cache)` → (T, C, D, K).
    static func cost(_ stdout: String, after header: String? = nil) throws -> (Int, Int, Int, Int) {
        var text = Substring(stdout)
        if let header, let range = stdout.range(of: header) { text = stdout[range.upperBound...] }
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("to embed: ") }, "\(stdout)")
        let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
        try #require(numbers.count >= 4, "\(line)")
        return (numbers[0], numbers[1], numbers[2], numbers[3])
    }

    @Test("a dry run's tokens and chunks to embed are what the run then embeds; --token-price prices them")
    func dryRunCostIsWhatTheRunSends() async throws {
        let ws = try Workspace("dry-run-cost")
        defer { ws.cleanUp() }
        try Corpus.write(count: 8, into: ws.corpus, seed: 0x6E_0042)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)

        // Other chunking: every document is written again, from the extraction cache, with new chunks.
        let settings = ["--set", "chunk.max_tokens=64"]
        let dry = try await ws.run(main, settings + ["--dry-run", "--token-price", "0.5"], expecting: 0)
        let (tokens, chunks, documents, _) = try Self.cost(dry.stdout)
        #expect(documents == 8, "\(dry)")
        #expect(tokens > 0 && chunks > 0, "\(dry)")
        #expect(
            dry.stdout.contains(String(format: "about $%.2f at $0.5 per million tokens", Double(tokens) * 0.5 / 1e6))
        )

        let stats = ws.root.appendingPathComponent("stats.json")
        let audit = ws.root.appendingPathComponent("audit.log")
        try await ws.run(main, settings + ["--stats-json", stats.path], auditLog: audit, expecting: 0)
        #expect(try ws.stats(stats).decoded.tokensEmbedded == tokens)
        #expect(AuditLog.lines(audit).count == chunks)

        // Nothing left to do: nothing to embed.
        let again = try await ws.run(main, settings + ["--dry-run"], expecting: 0)
        #expect(try Self.cost(again.stdout).0 == 0, "\(again)")

        // --token-price without --dry-run is a usage error.
        #expect(try await ws.run(main, ["--token-price", "1"]).exitCode == 1)
    }

    @Test("a candidate generation's dry run counts its documents, chunks and tokens; the build then embeds those")
    func candidateDryRun() async throws {
        let ws = try Workspace("dry-run-cost-candidate")
        defer { ws.cleanUp() }
        try Corpus.write(count: 6, into: ws.corpus, seed: 0x6E_0043)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        #expect(
            try await GenerationCLITests.generation(ws, "start", main, GenerationCLITests.candidateSettings).exitCode
                == 0
        )
        let dry = try await ws.run(main, ["--dry-run"], expecting: 0)
        let (tokens, chunks, documents, _) = try Self.cost(dry.stdout, after: "generation g1:")
        #expect(documents == 6, "\(dry)")
        #expect(tokens > 0, "\(dry)")
        let audit = ws.root.appendingPathComponent("audit.log")
        try await ws.run(main, auditLog: audit, expecting: 0)  // the active one has nothing to do
        #expect(AuditLog.lines(audit).count == chunks, "\(dry)")
    }
}
