import Foundation
import SluiceClient
import SluiceTesting
import Testing

/// The reranker (`search.rerank`, docs/USAGE.md "Reranking") through `sluice search`, `sluice check` and
/// `sluice serve` with its client, against the rerank stand-in (Sources/SluiceTesting/StandIns/rerank_standin.py),
/// which scores a passage by the number of distinct query words it holds.
@Suite(.serialized)
struct RerankCLITests {
    static let keyVariable = "SLUICE_TEST_RERANK_KEY"
    static let query = "valve pressure relief"
    /// Files with 3, 2, 1 and 0 of the query's words.
    static let files = [
        ("relief.md", "The relief valve opens when the pressure is too high.\n", 3),
        ("map.md", "A relief map of the valley shows the old valve house.\n", 2),
        ("gauge.md", "Gauges read the pressure in the line every hour.\n", 1),
        ("pump.md", "Pumps move water through the pipes of the mill.\n", 0),
    ]

    static func indexed(_ label: String) async throws -> (Workspace, Workspace.Target) {
        let ws = try Workspace(label)
        for (name, text, _) in files {
            try text.write(to: ws.corpus.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        let target = ws.target("t")
        try await ws.run(target, expecting: 0)
        return (ws, target)
    }

    static func settings(_ server: StandInServer, deadline: Double = 60) -> [String] {
        [
            "--set", "search.rerank.kind=tei", "--set", "search.rerank.url=\(server.baseURL)/rerank",
            "--set", "search.rerank.api_key_env=\(keyVariable)", "--set", "search.rerank.deadline_seconds=\(deadline)",
        ]
    }

    static func lines(_ stdout: String) throws -> [[String: Any]] {
        try stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test("search: the reranker's order and score, --no-rerank, the deadline said in text and JSON; check's line")
    func searchAndCheck() async throws {
        let (ws, target) = try await Self.indexed("rerank-search")
        defer { ws.cleanUp() }
        let key = "rk-cli-\(UUID().uuidString)"
        let reranker = try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", key])
        let environment: [String: String?] = [Self.keyVariable: key]
        let base = [ws.pipeline.path] + target.arguments + Self.settings(reranker)

        let json = try await ws.sluice(["search", Self.query, "--json", "-k", "3"] + base, environment: environment)
        #expect(json.exitCode == 0, "\(json)")
        let results = try Self.lines(json.stdout)
        #expect(results.map { $0["document_key"] as? String } == ["relief.md", "map.md", "gauge.md"], "\(json.stdout)")
        #expect(results.map { $0["rerank_score"] as? Double } == [3, 2, 1])
        #expect(results.allSatisfy { $0["score"] is Double }, "the first stage's score is kept")
        let status = try #require(results.first?["rerank"] as? [String: Any])
        #expect(status["applied"] as? Bool == true && status["model"] as? String == "tei")

        let text = try await ws.sluice(["search", Self.query, "-k", "2"] + base, environment: environment)
        #expect(text.exitCode == 0 && text.stdout.hasPrefix("reranked by tei\n"), "\(text)")
        #expect(text.stdout.contains("3.0000  first "), "\(text.stdout)")

        // --no-rerank: no key needed, no reranker field, no request.
        let plain = try await ws.sluice(["search", Self.query, "--json", "--no-rerank"] + base)
        #expect(plain.exitCode == 0, "\(plain)")
        #expect(try Self.lines(plain.stdout).allSatisfy { $0["rerank"] == nil && $0["rerank_score"] == nil })

        // The key's variable unset: the pipeline's mistake, named without a value.
        let unset = try await ws.sluice(["search", Self.query] + base)
        #expect(unset.exitCode == 1 && unset.stderr.contains(Self.keyVariable), "\(unset)")

        let check = try await ws.sluice(["check"] + base, environment: environment)
        #expect(check.exitCode == 0, "\(check)")
        let line = check.stdout.split(separator: "\n").first { $0.contains("reranker") }
        #expect(line?.hasPrefix("ok") == true && line?.contains("scored two passages") == true, "\(check.stdout)")

        // Slow past its deadline: the first stage's order, said so; exit 0.
        let slow = try await StandInServer.launch(
            script: "rerank_standin.py",
            arguments: ["--api-key", key, "--delay-ms", "120000"]
        )
        let late = [ws.pipeline.path] + target.arguments + Self.settings(slow, deadline: 0.5)
        let lateJSON = try await ws.sluice(["search", Self.query, "--json"] + late, environment: environment)
        #expect(lateJSON.exitCode == 0, "\(lateJSON)")
        let lateLines = try Self.lines(lateJSON.stdout)
        #expect(!lateLines.isEmpty && lateLines.allSatisfy { $0["rerank_score"] == nil })
        let lateStatus = try #require(lateLines.first?["rerank"] as? [String: Any])
        #expect(lateStatus["applied"] as? Bool == false)
        #expect((lateStatus["reason"] as? String)?.contains("search.rerank.deadline_seconds") == true)
        let lateText = try await ws.sluice(["search", Self.query] + late, environment: environment)
        #expect(lateText.stdout.hasPrefix("not reranked (tei): the reranker did not answer"), "\(lateText)")

        // A reranker that cannot be reached: check says unavailable (exit 6); search still answers.
        reranker.stop()
        let down = try await ws.sluice(["check"] + base, environment: environment)
        #expect(down.exitCode == 6, "\(down)")
        #expect(!down.stdout.contains(key) && !down.stderr.contains(key))
        let anyway = try await ws.sluice(["search", Self.query, "--json"] + base, environment: environment)
        #expect(anyway.exitCode == 0, "\(anyway)")
        #expect(!anyway.stdout.contains(key))
    }

    @Test("serve: rerank in the search answer, rerank_score per result, \"rerank\": false; the client decodes both")
    func serve() async throws {
        let (ws, target) = try await Self.indexed("rerank-serve")
        defer { ws.cleanUp() }
        let key = "rk-serve-\(UUID().uuidString)"
        let reranker = try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", key])
        let server = try await ServeProcess.start(
            ws,
            target,
            Self.settings(reranker),
            environment: [Self.keyVariable: key]
        )
        let answer = try await server.client().search(SearchRequest(query: Self.query, k: 2))
        #expect(answer.results.map(\.documentKey) == ["relief.md", "map.md"])
        #expect(answer.results.map(\.rerankScore) == [3, 2])
        #expect(answer.rerank?.applied == true && answer.rerank?.model == "tei")

        let skipped = try await server.client().search(SearchRequest(query: Self.query, k: 2, rerank: false))
        #expect(skipped.rerank?.applied == false && skipped.rerank?.reason?.contains("skipped") == true)
        #expect(skipped.results.allSatisfy { $0.rerankScore == nil })

        let bad = try await server.exchange(
            "POST",
            "/v1/search",
            body: Data(#"{"query": "valve", "rerank": "no"}"#.utf8)
        )
        #expect(bad.status == 400, "\(String(decoding: bad.body, as: UTF8.self))")
        _ = try await server.stop()
    }

    @Test("ask --json: the reranker's passages with rerank_score, and rerank in the answer")
    func ask() async throws {
        let (ws, target) = try await Self.indexed("rerank-ask")
        defer { ws.cleanUp() }
        let key = "rk-ask-\(UUID().uuidString)"
        let chatKey = "sk-test-\(UUID().uuidString.lowercased())"
        let reranker = try await StandInServer.launch(script: "rerank_standin.py", arguments: ["--api-key", key])
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", chatKey, "--model", "test-model", "--max-context-tokens", "300"]
        )
        let arguments =
            ["ask", Self.query, "--json", "-k", "2", ws.pipeline.path] + target.arguments + Self.settings(reranker) + [
                "--set", "answer.base_url=\(chat.baseURL)/v1", "--set", "answer.model=test-model",
                "--set", "answer.api_key_env=SLUICE_TEST_CHAT_KEY", "--set", "answer.max_context_tokens=300",
            ]
        let result = try await ws.sluice(
            arguments,
            environment: [Self.keyVariable: key, "SLUICE_TEST_CHAT_KEY": chatKey],
            timeout: .seconds(120)
        )
        #expect(result.exitCode == 0, "\(result)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let sources = try #require(object["sources"] as? [[String: Any]])
        #expect(sources.map { $0["document_key"] as? String } == ["relief.md", "map.md"], "\(result.stdout)")
        #expect(sources.map { $0["rerank_score"] as? Double } == [3, 2])
        let status = try #require(object["rerank"] as? [String: Any])
        #expect(status["applied"] as? Bool == true)
        #expect(!result.stdout.contains(key) && !result.stderr.contains(key))
    }
}
