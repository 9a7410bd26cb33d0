import Foundation
import SluiceClient
import SluiceTesting
import Testing

/// `sluice serve` over a local store holding a record whose bytes no longer decode (docs/RELIABILITY.md, "A
/// damaged record in the local store"): a search's answer says what it skipped (`skipped`: id, document key,
/// reason), read by the client, to an unrestricted caller; a caller restricted by access control learns
/// nothing of it (the field is absent), whichever group the damaged document belongs to.
@Suite(.serialized)
struct ServeSkippedRecordsCLITests {
    /// The access tests' corpus, indexed, with hr/pay-3.md's text damaged in the store's file: its key still
    /// reads, its text is not UTF-8.
    static func damagedCorpus(_ ws: Workspace) async throws -> Workspace.Target {
        let target = try ServeAccessCLITests.corpus(ws)
        try await ws.run(target, expecting: 0)
        let data = target.index.appendingPathComponent("data.mdb")
        try #require(try StateDamageCLITests.overwrite("Payroll 3: salary", in: data, with: 0xFF) > 0)
        return target
    }

    @Test("a search's answer names the record it skipped to the operator, and nothing of it to a restricted caller")
    func skippedInTheAnswer() async throws {
        let ws = try Workspace("serve-skipped")
        defer { ws.cleanUp() }
        let target = try await Self.damagedCorpus(ws)

        let server = try await ServeAccessCLITests.serve(ws, target)
        let query = SearchRequest(query: "salary payroll", k: 30, mode: "keyword")
        let operatorView = try await server.client(token: ServeAccessCLITests.operatorToken).search(query)
        let skipped = try #require(operatorView.skipped, "the operator is told what the search skipped")
        #expect(skipped.map(\.documentKey) == ["hr/pay-3.md"], "\(skipped)")
        #expect(skipped.first?.reason.contains("not UTF-8") == true, "\(skipped)")
        #expect(skipped.first.map { "\($0)" }?.contains("hr/pay-3.md") == true, "the client shows it")
        #expect(!operatorView.results.contains { $0.documentKey == "hr/pay-3.md" })
        #expect(operatorView.results.contains { $0.documentKey == "hr/pay-4.md" }, "the others answer")

        // Restricted callers, of the damaged document's group and of another: nothing of it, not even a count.
        for key in [ServeAccessCLITests.hrKey, ServeAccessCLITests.engKey] {
            let view = try await server.client(token: key).search(query)
            #expect(view.skipped == nil, "a restricted caller is told nothing: \(view.skipped ?? [])")
            #expect(!view.results.contains { $0.documentKey == "hr/pay-3.md" })
        }
        let raw = try await server.client(token: ServeAccessCLITests.engKey).search(
            SearchRequest(query: "salary payroll", k: 30, mode: "vector")
        )
        #expect(raw.skipped == nil)

        // A search that meets no damaged record says none was skipped.
        let clean = try await server.client(token: ServeAccessCLITests.operatorToken).search(
            SearchRequest(query: "office hours holidays", k: 1, mode: "keyword")
        )
        #expect(clean.skipped == [], "\(String(describing: clean.skipped))")
        _ = try await server.stop()
    }

    @Test(
        "an answer names the records its searches skipped to the operator, and nothing of them to a restricted caller"
    )
    func skippedInTheAnswerToAQuestion() async throws {
        let ws = try Workspace("serve-skipped-ask")
        defer { ws.cleanUp() }
        let target = try await Self.damagedCorpus(ws)
        let key = "sk-test-\(UUID().uuidString.lowercased())-skipped"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", key, "--model", "test-model", "--max-context-tokens", "4000"]
        )
        defer { chat.stop() }
        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(ws.file("keys.yaml").path)", "--set", "serve.api_key_env=SLUICE_TEST_TOKEN",
            ] + AskFixture.settings(chat),
            environment: ["SLUICE_TEST_TOKEN": ServeAccessCLITests.operatorToken, AskFixture.keyVariable: key]
        )
        let question = AskRequest(question: "Payroll salary bands?", k: 30, mode: "keyword")
        let operatorView = try await server.client(token: ServeAccessCLITests.operatorToken).ask(question)
        let skipped = try #require(operatorView.skipped, "the operator is told what the searches skipped")
        #expect(skipped.map(\.documentKey) == ["hr/pay-3.md"], "\(skipped)")
        #expect(!operatorView.sources.contains { $0.documentKey == "hr/pay-3.md" })
        let restricted = try await server.client(token: ServeAccessCLITests.hrKey).ask(question)
        #expect(restricted.skipped == nil, "a restricted caller is told nothing")
        _ = try await server.stop()
    }
}
