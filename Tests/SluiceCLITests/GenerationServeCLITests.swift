import Foundation
import SluiceClient
import Testing

/// A running `sluice serve` follows a promote without a restart (docs/GENERATIONS.md): searches sent
/// without pause across the switch all succeed with results, first from the old generation, then from the
/// new one, and never from a mix.
@Suite(.serialized)
struct GenerationServeCLITests {
    @Test("serve follows a promote without a restart; no search fails or comes back empty during the switch")
    func serveFollowsThePromote() async throws {
        let ws = try Workspace("generation-serve")
        defer { ws.cleanUp() }
        try Corpus.write(count: 10, into: ws.corpus, seed: 0x6E_0037)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let query = "configuration file"
        let server = try await ServeProcess.start(ws, main)
        let client = server.client()
        let old = try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id)
        try #require(!old.isEmpty)

        #expect(
            try await GenerationCLITests.generation(ws, "start", main, GenerationCLITests.candidateSettings).exitCode
                == 0
        )
        try await ws.run(main, expecting: 0)
        // Still the old generation: the candidate is not served before the promote.
        #expect(try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id) == old)

        let promoted = try await GenerationCLITests.generation(ws, "promote", main)
        #expect(promoted.exitCode == 0, "\(promoted)")
        // The CLI reads the new active generation at once: its answer is what serve must come to.
        let expected = try await Self.cliSearch(ws, main, query)
        #expect(expected != old, "the two generations answer alike: the test proves nothing")

        try await Self.expectFollows(client, query, from: old, to: expected)
        let stopped = try await server.stop()
        #expect(stopped.exitCode == 0, "\(stopped)")
    }

    @Test(
        "serve over a second state of the same store follows the first state's promote",
        arguments: [GenerationShardsCLITests.Deployment.local, .pgvector, .pinecone]
    )
    func serveOverASecondStateFollows(_ deployment: GenerationShardsCLITests.Deployment) async throws {
        // The reader's state folder (another machine's `sluice serve`) has no manifest of its own, and takes the
        // store's copy (on pgvector and Pinecone, seen failing: it served the pipeline file's original generation).
        try await GenerationLostStateCLITests.withReader(
            "generation-serve-reader",
            deployment,
            documents: 10,
            seed: 0x6E_0051
        ) { ws, main, reader in
            try await GenerationCLITests.buildAndPromoteCandidate(ws, main)
            let query = "configuration file"
            let server = try await ServeProcess.start(ws, reader)
            let client = server.client()
            let old = try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id)
            #expect(old == (try await Self.cliSearch(ws, main, query)), "serve does not answer from the active g1")

            try await GenerationCLITests.startBuildAndPromote(ws, main, ["--set", "chunk.max_tokens=40"])
            let expected = try await Self.cliSearch(ws, main, query)
            #expect(expected != old, "the two generations answer alike: the test proves nothing")

            // The reader's manifest exists now (g1 active): only the store's copy, later, says g2.
            try await Self.expectFollows(client, query, from: old, to: expected)
            let stopped = try await server.stop()
            #expect(stopped.exitCode == 0, "\(stopped)")
        }
    }

    /// Searches `query` (vector mode) without pause until the server answers `expected`, and expects every
    /// answer until then to be `old` or `expected` (neither empty nor a mix), within a guard against hangs.
    static func expectFollows(
        _ client: SluiceClient,
        _ query: String,
        from old: [String],
        to expected: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let deadline = ContinuousClock.now + .seconds(120)
        var answers: [[String]] = []
        while ContinuousClock.now < deadline {
            let ids = try await client.search(SearchRequest(query: query, k: 5, mode: "vector")).results.map(\.id)
            answers.append(ids)
            if ids == expected { break }
        }
        #expect(
            answers.last == expected,
            "serve never followed the switch: \(answers.suffix(3))",
            sourceLocation: sourceLocation
        )
        for ids in answers {
            #expect(
                ids == old || ids == expected,
                "an answer from neither generation (a mix, or empty): \(ids)",
                sourceLocation: sourceLocation
            )
        }
    }

    /// The ids `sluice search --json` answers, (vector mode, as the server's requests above).
    static func cliSearch(_ ws: Workspace, _ target: Workspace.Target, _ query: String) async throws -> [String] {
        let result = try await ws.sluice(
            ["search", query, "--json", "-k", "5", "--mode", "vector", ws.pipeline.path] + target.arguments
        )
        try #require(result.exitCode == 0, "\(result)")
        // One JSON object per line, best first.
        return try result.stdout.split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            return try #require(object?["id"] as? String, "\(line)")
        }
    }
}
