import Foundation
import SluiceClient
import SluiceCore
import SluiceTesting
import Testing

/// The access guarantees of docs/ACCESS.md on every store Sluice ships (issue 36's matrix): a real
/// PostgreSQL+pgvector and Chroma, the Qdrant and Pinecone stand-ins and JSONL (the local store is
/// `ServeAccessCLITests`). The same corpus and keys on each: k readable results although unreadable ones
/// rank above them, in every mode the store has; ask's sources; a document read of an unreadable document
/// answers as a missing one; the export holds exactly the readable records; no result, snippet, score or
/// duplicate of an unreadable record.
@Suite(.serialized)
struct ServeAccessMatrixCLITests {
    typealias Fixture = ServeAccessCLITests

    @Test(
        "the access matrix on a store: search, ask, document reads and duplicates",
        arguments: StoreUnderTest.Kind.allCases
    )
    func matrix(_ kind: StoreUnderTest.Kind) async throws {
        let ws = try Workspace("serve-access-\(kind.rawValue)")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(kind, in: ws)
        defer { store.stop() }
        _ = try Fixture.corpus(ws)
        try Fixture.writeCopy(ws)
        let target = store.target(ws, "acl")
        try await ws.run(target, expecting: 0)
        let chatKey = "sk-test-\(UUID().uuidString.lowercased())-matrix"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", chatKey, "--model", "test-model", "--max-context-tokens", "2000"]
        )
        defer { chat.stop() }
        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(ws.file("keys.yaml").path)", "--set", "serve.api_key_env=SLUICE_TEST_TOKEN",
                "--set", "answer.base_url=\(chat.baseURL)/v1", "--set", "answer.model=test-model",
                "--set", "answer.api_key_env=\(AskFixture.keyVariable)", "--set", "answer.max_context_tokens=2000",
            ],
            environment: ["SLUICE_TEST_TOKEN": Fixture.operatorToken, AskFixture.keyVariable: chatKey]
        )
        let eng = server.client(token: Fixture.engKey)
        let hr = server.client(token: Fixture.hrKey)
        let admin = server.client(token: Fixture.operatorToken)
        let label = kind.rawValue
        let hrReadable = Set((0..<20).map { "hr/pay-\($0).md" } + ["handbook.md", Fixture.copy])

        let modes = kind == .pgvector ? ["vector", "keyword", "hybrid"] : ["vector"]
        for mode in modes {
            // Unreadable records rank above what eng may read (filtering the operator's five would leave fewer).
            let top = try await admin.search(SearchRequest(query: "salary payroll", k: 5, mode: mode)).results
            #expect(
                top.contains { !Fixture.engReadable.contains($0.documentKey) },
                "\(label) \(mode): \(top.map(\.documentKey))"
            )
            let results = try await eng.search(SearchRequest(query: "salary payroll", k: 5, mode: mode)).results
            #expect(results.count == 5, "\(label) \(mode): \(results.map(\.documentKey))")
            #expect(
                Set(results.map(\.documentKey)) == Fixture.engReadable,
                "\(label) \(mode): \(results.map(\.documentKey))"
            )
            for result in results {
                #expect(result.duplicates.isEmpty, "\(label) \(mode): \(result.documentKey) \(result.duplicates)")
                #expect(result.metadata["access"] == nil, "\(label) \(mode): the readers shown: \(result.metadata)")
            }
            let all = try await hr.search(SearchRequest(query: "salary payroll", k: 40, mode: mode)).results
            #expect(Set(all.map(\.documentKey)) == hrReadable, "\(label) \(mode): \(all.map(\.documentKey))")
            #expect(all.count == hrReadable.count, "\(label) \(mode)")
            #expect(all.allSatisfy { $0.duplicates.isEmpty }, "\(label) \(mode)")
        }
        try await Fixture.expectFilterProbesAnswerAsMissing(
            eng,
            unreadable: "hr/pay-3.md",
            missing: "hr/pay-x.md",
            modes: modes,
            label
        )
        // The copy and its original collapse into one result for the operator, never for a group.
        try await Fixture.expectCopiesHidden(operator: admin, eng: eng, hr: hr, modes: modes, label)

        // Ask: the passages retrieved and returned as sources are readable ones, k of them.
        let answer = try await eng.ask(AskRequest(question: "What about salary payroll?", k: 5))
        #expect(
            Set(answer.sources.map(\.documentKey)) == Fixture.engReadable,
            "\(label): \(answer.sources.map(\.documentKey))"
        )

        // A document read: an unreadable one answers exactly as a missing one; a readable one has its chunks.
        let auth = ["Authorization": "Bearer \(Fixture.engKey)"]
        let hidden = try await server.exchange("GET", "/v1/documents/hr%2Fpay-3.md", headers: auth)
        let missing = try await server.exchange("GET", "/v1/documents/hr%2Fpay-x.md", headers: auth)
        #expect(hidden.status == 404 && missing.status == 404, "\(label)")
        #expect(
            String(decoding: hidden.body, as: UTF8.self).replacingOccurrences(of: "pay-3", with: "KEY")
                == String(decoding: missing.body, as: UTF8.self).replacingOccurrences(of: "pay-x", with: "KEY"),
            "\(label)"
        )
        let hrAuth = ["Authorization": "Bearer \(Fixture.hrKey)"]
        for key in ["secret%2Fboard.md", "eng%2Fdesign-0.md", "notes%2Fplan.md"] {
            #expect(try await server.exchange("GET", "/v1/documents/\(key)", headers: hrAuth).status == 404, "\(label)")
        }
        // A key the checkpoint does not hold asks the store as an unreadable one does: the same work, the
        // same time (the stand-ins count the requests they answer, this count included).
        if kind == .qdrant || kind == .pinecone {
            _ = try await server.exchange("GET", "/v1/documents/hr%2Fpay-4.md", headers: auth)
            let before = try store.standInStats()["requests"] ?? 0
            _ = try await server.exchange("GET", "/v1/documents/hr%2Fpay-4.md", headers: auth)
            let between = try store.standInStats()["requests"] ?? 0
            _ = try await server.exchange("GET", "/v1/documents/hr%2Fpay-y.md", headers: auth)
            let after = try store.standInStats()["requests"] ?? 0
            #expect(
                between - before > 1 && after - between == between - before,
                "\(label): \([before, between, after])"
            )
        }
        try await Fixture.expectListing(eng, Fixture.engReadable)
        try await Fixture.expectListing(hr, hrReadable)
        // The export: the operator's is `sluice export`'s records; a key's exactly its readable ones.
        let all = try await Fixture.expectOperatorExport(admin, equals: Export.records(try await ws.export(target)))
        try await Fixture.expectExport(eng, readers: ["eng", "emil", "*"], all: all)
        try await Fixture.expectExport(hr, readers: ["hr", "hana", "*"], all: all)
        let own = try await eng.document(key: "eng/design-1.md")
        #expect(own.chunks?.count == 1 && own.chunks?.first?.text.contains("Design 1") == true, "\(label)")
        #expect(try await eng.document(key: "handbook.md").chunks?.count == 1, "\(label)")
        #expect(try await admin.document(key: "secret/board.md").chunks?.count == 1, "\(label)")
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(label): \(result.stderr.suffix(2000))")
    }

    @Test("pgvector: documents a key may not read, added, change none of its scores in any mode")
    func hiddenDocumentsChangeNoScoreOnPgvector() async throws {
        let ws = try Workspace("serve-access-scores-pgvector")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        _ = try Fixture.corpus(ws)
        try await Fixture.expectHiddenDocumentsChangeNoScore(
            ws,
            store.target(ws, "acl_scores"),
            modes: ["vector", "keyword", "hybrid"],
            "pgvector"
        )
    }
}
