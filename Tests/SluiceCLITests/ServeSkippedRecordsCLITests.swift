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

        // Streamed, the last event's answer says the same, under the same access rule.
        let streamed = try await Self.streamedAnswer(server.client(token: ServeAccessCLITests.operatorToken), question)
        let streamedSkipped = try #require(streamed.skipped, "a streamed answer says what its searches skipped")
        #expect(streamedSkipped.map(\.documentKey) == ["hr/pay-3.md"], "\(streamedSkipped)")
        #expect(streamedSkipped.first?.reason.contains("not UTF-8") == true, "\(streamedSkipped)")
        #expect(!streamed.sources.contains { $0.documentKey == "hr/pay-3.md" })
        for key in [ServeAccessCLITests.hrKey, ServeAccessCLITests.engKey] {
            let view = try await Self.streamedAnswer(server.client(token: key), question)
            #expect(view.skipped == nil, "a restricted caller is told nothing: \(view.skipped ?? [])")
        }
        _ = try await server.stop()
    }

    /// The answer of `askStream`'s last event (`done`).
    static func streamedAnswer(_ client: SluiceClient, _ question: AskRequest) async throws -> AskResponse {
        var done: AskResponse?
        for try await event in client.askStream(question) {
            if case .done(let answer) = event { done = answer }
        }
        return try #require(done, "the stream ends with its answer")
    }

    @Test("an export through the API names a damaged record once, on the page whose range holds it")
    func unreadableInTheExport() async throws {
        let ws = try Workspace("serve-skipped-export")
        defer { ws.cleanUp() }
        let target = try await Self.damagedCorpus(ws)
        // The CLI's export names the same record and reason, and exits 2.
        let cli = try await ws.sluice(["export", ws.pipeline.path] + target.arguments)
        #expect(cli.exitCode == 2, "\(cli.stderr)")

        let server = try await ServeAccessCLITests.serve(ws, target)
        let admin = server.client(token: ServeAccessCLITests.operatorToken)
        for limit in [1, 2, 3, 7, 100] {
            var cursor: String?
            var named: [(record: SkippedRecord, after: String?, next: String?)] = []
            var exported: [String] = []
            var pages = 0
            repeat {
                let page = try await admin.export(cursor: cursor, limit: limit)
                let unreadable = try #require(page.unreadable, "the operator's pages say what they left out")
                named += unreadable.map { ($0, cursor, page.nextCursor) }
                exported += page.records.map(\.documentKey)
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages <= 100
            #expect(named.map(\.record.documentKey) == ["hr/pay-3.md"], "limit \(limit): \(named.map(\.record))")
            #expect(!exported.contains("hr/pay-3.md") && exported.contains("hr/pay-4.md"), "limit \(limit)")
            let written = cli.stdout.split(separator: "\n").count
            #expect(exported.count == written, "limit \(limit): the records `sluice export` writes: \(exported)")
            if let (record, after, next) = named.first {
                #expect(cli.stderr.contains(record.id), "the CLI names it too: \(cli.stderr)")
                #expect(cli.stderr.contains(record.reason), "with the same reason: \(record.reason) / \(cli.stderr)")
                #expect(record.reason.contains("not UTF-8"), "\(record)")
                // The page's range: after its cursor, up to and including its last record.
                let key = "hr/pay-3.md".utf8
                if let after { #expect(ExportCursor(after).key.utf8.lexicographicallyPrecedes(key), "\(after)") }
                if let next { #expect(!ExportCursor(next).key.utf8.lexicographicallyPrecedes(key), "\(next)") }
            }
        }
        // A restricted caller, of the damaged document's group or another, learns nothing of it.
        for key in [ServeAccessCLITests.hrKey, ServeAccessCLITests.engKey] {
            var cursor: String?
            var pages = 0
            repeat {
                let page = try await server.client(token: key).export(cursor: cursor, limit: 2)
                #expect(page.unreadable == nil, "a restricted caller is told nothing: \(page.unreadable ?? [])")
                cursor = page.nextCursor
                pages += 1
            } while cursor != nil && pages <= 100
        }
        _ = try await server.stop()
    }

    /// A `next_cursor` (`ORDINAL:KEY`)'s key.
    struct ExportCursor {
        var key: String
        init(_ text: String) { key = String(text.drop { $0 != ":" }.dropFirst()) }
    }
}
