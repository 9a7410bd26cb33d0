import Foundation
import Testing

/// A run whose local store's keyword merges all fail (`SLUICE_DEBUG_KEYWORD_MERGE_FAILURE=io`): the run
/// succeeds, the failure is logged once with its reason and counted in the summary, the run record
/// (`status`) and the metrics file, and keyword searches answer as a run whose merges succeeded.
@Suite struct KeywordMergeFailuresCLITests {
    /// `sluice search --mode keyword` of `query` against `target`: the JSON lines' ids and scores.
    static func keyword(_ ws: Workspace, _ target: Workspace.Target, _ query: String) async throws -> [String] {
        let result = try await ws.sluice(
            ["search", "-k", "20", "--json", "--mode", "keyword"] + target.arguments + ["--", query, ws.pipeline.path]
        )
        try #require(result.exitCode == 0, "\(result)")
        return try result.stdout.split(separator: "\n").map { line in
            let hit = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return "\(hit?["id"] ?? "-") \(hit?["score"] ?? "-")"
        }
    }

    @Test(
        "failing keyword merges: logged once with the reason, counted in the summary, status and metrics; searches right"
    )
    func failingMergesAreReported() async throws {
        let ws = try Workspace("merge-failures")
        defer { ws.cleanUp() }
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x5EED_0601)
        let main = ws.target("main")
        let metrics = ws.file("sluice.prom")
        let failing = try await ws.sluice(
            ws.runArguments(main, ["--metrics-file", metrics.path, "--set", "sink.batch=2"]),
            environment: ["SLUICE_DEBUG_KEYWORD_MERGE_FAILURE": "io"]
        )
        #expect(failing.exitCode == 0, "\(failing)")
        let output = failing.stdout + failing.stderr
        #expect(
            output.components(separatedBy: "the store's keyword merges failed (failed)").count == 2,
            "logged once: \(failing)"
        )
        #expect(output.contains("mdb_put: Input/output error"), "\(failing)")
        #expect(output.contains("keyword merge passes failed"), "\(failing)")

        let status = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(status.stdout.contains("store upkeep: "), "\(status)")
        let text = try String(contentsOf: metrics, encoding: .utf8)
        let sample = text.split(separator: "\n").first { $0.hasPrefix("sluice_run_store_upkeep_failures{") }
        let failures = sample.flatMap { $0.split(separator: " ").last }.flatMap { Double($0) }
        #expect((1...3).contains(failures ?? 0), "\(sample.map(String.init) ?? text)")

        // The same corpus, merges working: the same keyword answers.
        let reference = ws.target("reference")
        try await ws.run(reference, ["--set", "sink.batch=2"], expecting: 0)
        for query in ["the", "report invoice", "data"] {
            #expect(
                try await Self.keyword(ws, main, query) == (try await Self.keyword(ws, reference, query)),
                "\(query)"
            )
        }
    }
}
