import Foundation
import SluiceTesting
import Testing

/// What the output tells a new user (issue 30): a run after files were deleted says their vectors stay and
/// how `--prune` removes them; a search that finds nothing says why (a filter, `--min-score`) instead of
/// asking whether the store is empty; and the text output shows the cosine `--min-score` compares.
@Suite struct RunAndSearchHintsCLITests {
    @Test("a run after files were deleted says their vectors stay, and names --prune")
    func aRunAfterDeletionsHintsAtPrune() async throws {
        let ws = try Workspace("prune-hint")
        defer { ws.cleanUp() }
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_3101, maxBytes: 2_000)
        let main = ws.target("main")
        let first = try await ws.run(main, expecting: 0)
        #expect(!first.stderr.contains("--prune"), "\(first)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: ws.corpus.path).filter {
            $0.hasSuffix(".txt") || $0.hasSuffix(".md")
        }
        .sorted()
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(files[0]))
        let second = try await ws.run(main, expecting: 0)
        #expect(second.stderr.contains("1 document"), "\(second)")
        #expect(second.stderr.contains("--prune"), "\(second)")
        let pruned = try await ws.run(main, ["--prune", "--allow-mass-delete"], expecting: 0)
        let third = try await ws.run(main, expecting: 0)
        #expect(!third.stderr.contains("--prune"), "after \(pruned)\n\(third)")
    }

    @Test("a search that finds nothing says why: the filter, or --min-score; the store's emptiness only when it is")
    func anEmptyAnswerSaysWhy() async throws {
        let ws = try Workspace("search-empty")
        defer { ws.cleanUp() }
        let main = ws.target("main")
        let search = ["search", "sluice gate", ws.pipeline.path] + main.arguments
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_3102, maxBytes: 2_000)
        try await ws.run(main, expecting: 0)
        let filtered = try await ws.sluice(search + ["--filter", "format = md"])
        #expect(filtered.exitCode == 0, "\(filtered)")
        #expect(!filtered.stdout.contains("store empty"), "\(filtered)")
        #expect(filtered.stdout.contains("filter"), "\(filtered)")
        let high = try await ws.sluice(search + ["--mode", "vector", "--min-score", "0.9999"])
        #expect(high.exitCode == 0, "\(high)")
        #expect(!high.stdout.contains("store empty"), "\(high)")
        #expect(high.stdout.contains("--min-score"), "\(high)")
    }

    @Test("in hybrid mode the text output shows the cosine that --min-score compares")
    func hybridShowsTheCosine() async throws {
        let ws = try Workspace("search-cosine")
        defer { ws.cleanUp() }
        let main = ws.target("main")
        try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_3103, maxBytes: 2_000)
        try await ws.run(main, expecting: 0)
        let result = try await ws.sluice(
            ["search", "the", "--mode", "hybrid", ws.pipeline.path] + main.arguments
        )
        #expect(result.exitCode == 0, "\(result)")
        #expect(result.stdout.contains("cosine "), "\(result)")
    }
}
