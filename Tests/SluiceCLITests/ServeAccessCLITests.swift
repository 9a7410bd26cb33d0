import Foundation
import SluiceClient
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Access control on the real `sluice serve` (docs/ACCESS.md, issue 36): records carry their readers from
/// the pipeline's rules (a path capture, front matter, `access.default`), keys from `serve.keys_file`
/// identify a principal and its groups, and the access filter is part of the store's own query: a key of
/// one group never sees the other's documents, in results, ask's sources or document reads (404 as for a
/// missing one), and k results come back when k readable ones exist.
@Suite(.serialized)
struct ServeAccessCLITests {
    static let operatorToken = "operator-token-0c41"
    /// Keys and their SHA-256 (from `printf %s KEY | sha256sum`, not from Sluice's own code).
    static let hrKey = "hr-key-7f3a9c"
    static let engKey = "eng-key-2b8d41"
    static let secondEngKey = "eng-key-second-55ce"
    static let searchOnlyKey = "docs-less-key-91aa"
    static let hrDigest = "9b06bef0db40898b7596e714e6f941db2488af1c8ac51b653b70e43345d21594"
    static let engDigest = "265808e82ac98819e67db19e11358fed02bc09d53606ba65fd678c5808e9f010"
    static let secondEngDigest = "71324cf9152151f4993b323e63f3f4ce117409346769636289df015e9092135a"
    static let searchOnlyDigest = "f787a04049052b1c7d6a8dc614c2352d28d8f2ff5fa51d0f698714724693c886"

    /// What the eng group may read: its three designs, the plan whose front matter names it, the handbook
    /// (no readers: `access.default: allow`).
    static let engReadable: Set<String> = [
        "eng/design-0.md", "eng/design-1.md", "eng/design-2.md", "notes/plan.md", "handbook.md",
    ]

    static func keysFile(
        _ entries: [(id: String, digest: String, principal: String, group: String, scopes: String)]
    )
        -> String
    {
        "keys:\n"
            + entries.map {
                """
                  - id: \($0.id)
                    sha256: "\($0.digest)"
                    principal: \($0.principal)
                    groups: [\($0.group)]
                    scopes: [\($0.scopes)]

                """
            }.joined()
    }

    static let firstKeys = keysFile([
        ("hr-app", hrDigest, "hana", "hr", "search, ask, documents, export"),
        ("eng-app", engDigest, "emil", "eng", "search, ask, documents, export"),
        ("search-only", searchOnlyDigest, "sam", "eng", "search"),
    ])

    /// Twenty payroll documents (hr, by path), three designs (eng, by path), the plan (eng, by front
    /// matter), the board's minutes (a group no key has) and the handbook (no readers).
    static func corpus(_ ws: Workspace) throws -> Workspace.Target {
        for index in 0..<20 {
            try Corpus.write(
                "Payroll \(index): salary bands, salary payroll review, payroll salary grade \(index).",
                to: ws.corpus.appendingPathComponent("hr/pay-\(index).md")
            )
        }
        for index in 0..<3 {
            try Corpus.write(
                "Design \(index) of the build cache; one line on salary for contractors number \(index).",
                to: ws.corpus.appendingPathComponent("eng/design-\(index).md")
            )
        }
        try Corpus.write(
            "---\naccess: [eng]\n---\n# Plan\n\nThe roadmap mentions salary reviews once.\n",
            to: ws.corpus.appendingPathComponent("notes/plan.md")
        )
        try Corpus.write(
            "---\naccess: [board]\n---\n# Minutes\n\nThe board sets the salary payroll budget.\n",
            to: ws.corpus.appendingPathComponent("secret/board.md")
        )
        try Corpus.write(
            "The handbook: office hours, holidays, and salary payday on the 25th.",
            to: ws.corpus.appendingPathComponent("handbook.md")
        )
        let pipeline =
            Workspace.pipelineYAML.replacingOccurrences(
                of: "source:\n  path: ./corpus\n",
                with: "source:\n  path: ./corpus\n  metadata_from_path: \"^(?<access>hr|eng)/\"\n"
            ) + "access:\n  enabled: true\n  default: allow\n"
        try pipeline.write(to: ws.pipeline, atomically: true, encoding: .utf8)
        try firstKeys.write(to: ws.file("keys.yaml"), atomically: true, encoding: .utf8)
        return ws.target("t")
    }

    static func serve(_ ws: Workspace, _ target: Workspace.Target, _ extra: [String] = []) async throws -> ServeProcess
    {
        try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(ws.file("keys.yaml").path)", "--set", "serve.api_key_env=SLUICE_TEST_TOKEN",
            ] + extra,
            environment: ["SLUICE_TEST_TOKEN": operatorToken]
        )
    }

    @Test(
        "two groups: search, documents and scopes restricted inside the store; k readable results; 401; 404 as missing"
    )
    func groupsSeeOnlyTheirOwn() async throws {
        let ws = try Workspace("serve-access")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await ws.run(target, expecting: 0)
        let server = try await Self.serve(ws, target)
        let eng = server.client(token: Self.engKey)
        let hr = server.client(token: Self.hrKey)

        // k readable results although twenty unreadable payroll documents rank above them, in every mode.
        for mode in ["vector", "keyword", "hybrid"] {
            let results = try await eng.search(SearchRequest(query: "salary payroll", k: 5, mode: mode)).results
            #expect(Set(results.map(\.documentKey)) == Self.engReadable, "\(mode): \(results.map(\.documentKey))")
            #expect(results.allSatisfy { $0.duplicates.allSatisfy { Self.engReadable.contains($0.documentKey) } })
        }
        let hrResults = try await hr.search(SearchRequest(query: "salary payroll", k: 40)).results
        #expect(hrResults.contains { $0.documentKey == "handbook.md" })
        #expect(hrResults.allSatisfy { $0.documentKey.hasPrefix("hr/") || $0.documentKey == "handbook.md" })
        #expect(hrResults.count == 21, "\(hrResults.map(\.documentKey))")
        let everything = try await server.client(token: Self.operatorToken)
            .search(SearchRequest(query: "salary payroll", k: 40)).results
        #expect(everything.count == 26 && everything.contains { $0.documentKey == "secret/board.md" })
        try await Self.expectFilterProbesAnswerAsMissing(
            eng,
            unreadable: "hr/pay-3.md",
            missing: "hr/pay-x.md",
            modes: ["vector", "keyword", "hybrid"],
            "local"
        )

        // A document the key may not read answers exactly as a missing one.
        let auth = { (key: String) in ["Authorization": "Bearer \(key)"] }
        let hidden = try await server.exchange("GET", "/v1/documents/hr%2Fpay-3.md", headers: auth(Self.engKey))
        let missing = try await server.exchange("GET", "/v1/documents/hr%2Fpay-x.md", headers: auth(Self.engKey))
        #expect(hidden.status == 404 && missing.status == 404)
        #expect(
            String(decoding: hidden.body, as: UTF8.self).replacingOccurrences(of: "pay-3", with: "KEY")
                == String(decoding: missing.body, as: UTF8.self).replacingOccurrences(of: "pay-x", with: "KEY")
        )
        for key in ["secret%2Fboard.md", "eng%2Fdesign-1.md"] {
            #expect(try await server.exchange("GET", "/v1/documents/\(key)", headers: auth(Self.hrKey)).status == 404)
        }
        let own = try await eng.document(key: "eng/design-1.md")
        #expect(own.chunks?.count == 1 && own.chunks?.first?.text.contains("Design 1") == true)
        // A record's readers (group names) are the operator's to see, not a restricted caller's.
        #expect(own.chunks?.allSatisfy { $0.metadata["access"] == nil } == true, "\(own.chunks ?? [])")
        let seen = try await eng.search(SearchRequest(query: "salary payroll", k: 5)).results
        #expect(seen.allSatisfy { $0.metadata["access"] == nil }, "\(seen.map(\.metadata))")
        let operatorView = try await server.client(token: Self.operatorToken)
            .search(SearchRequest(query: "salary payroll", k: 5)).results
        #expect(operatorView.allSatisfy { $0.metadata["access"] != nil }, "\(operatorView.map(\.metadata))")
        let operatorDocument = try await server.client(token: Self.operatorToken).document(key: "eng/design-1.md")
        #expect(operatorDocument.chunks?.first?.metadata["access"] != nil)
        #expect(try await eng.document(key: "handbook.md").chunks?.count == 1)
        let board = try await server.client(token: Self.operatorToken).document(key: "secret/board.md")
        #expect(board.chunks?.count == 1)

        // The listing: the documents the key may read, the store asked with the access filter; pages as
        // full as the limit says while readable documents remain, whatever lies between them.
        #expect(try await server.client(token: Self.operatorToken).documents().documents.count == 26)
        try await Self.expectListing(eng, Self.engReadable)
        try await Self.expectListing(hr, Set((0..<20).map { "hr/pay-\($0).md" } + ["handbook.md"]))
        // Scopes; credentials.
        let scoped = try await server.exchange(
            "GET",
            "/v1/documents/eng%2Fdesign-1.md",
            headers: auth(Self.searchOnlyKey)
        )
        #expect(scoped.status == 403)
        let metrics = try await server.exchange("GET", "/metrics", headers: auth(Self.engKey))
        #expect(metrics.status == 403)
        let searchOnly = try await server.client(token: Self.searchOnlyKey)
            .search(SearchRequest(query: "salary payroll", k: 5, mode: "vector")).results
        #expect(Set(searchOnly.map(\.documentKey)) == Self.engReadable)
        for headers in [auth("eng-key-2b8d42"), auth(Self.engDigest), [:]] {
            let refused = try await server.exchange(
                "POST",
                "/v1/search",
                body: Data(#"{"query": "salary"}"#.utf8),
                headers: headers
            )
            #expect(refused.status == 401 && ServeProcess.errorCode(refused.body) == "unauthorized")
        }
        let result = try await server.stop()
        #expect(result.exitCode == 0)
        for secret in [Self.engKey, Self.hrKey, Self.operatorToken] {
            #expect(!result.stderr.contains(secret) && !result.stdout.contains(secret))
        }
    }

    /// A restricted caller probing by its own filter: asking for an unreadable document's key by name
    /// answers as asking for a key that does not exist (no result, no error), in each of `modes`.
    static func expectFilterProbesAnswerAsMissing(
        _ client: SluiceClient,
        unreadable: String,
        missing: String,
        modes: [String],
        _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        for mode in modes {
            var answers: [[String]] = []
            for key in [unreadable, missing] {
                let request = SearchRequest(
                    query: "salary payroll",
                    k: 5,
                    filter: ["document_key": ["$eq": .string(key)]],
                    mode: mode
                )
                answers.append(try await client.search(request).results.map(\.documentKey))
            }
            #expect(answers == [[], []], "\(label) \(mode): \(answers)", sourceLocation: sourceLocation)
        }
    }

    /// Lists `client`'s documents two at a time: the pages hold `readable` exactly, in the checkpoint's
    /// order, each page full but the last, then the last without a cursor.
    static func expectListing(
        _ client: SluiceClient,
        _ readable: Set<String>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        var listed: [String] = []
        var cursor: String?
        var pages = 0
        repeat {
            let page = try await client.documents(cursor: cursor, limit: 2)
            listed += page.documents.map(\.key)
            cursor = page.nextCursor
            pages += 1
            if cursor != nil {
                #expect(page.documents.count == 2, "\(page.documents.map(\.key))", sourceLocation: sourceLocation)
            }
        } while cursor != nil && pages <= readable.count
        #expect(listed.count == readable.count && Set(listed) == readable, "\(listed)", sourceLocation: sourceLocation)
        #expect(listed == listed.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }, sourceLocation: sourceLocation)
        #expect(pages == (readable.count + 1) / 2, "\(pages) pages", sourceLocation: sourceLocation)
    }

    @Test("ask as a key of one group: the sources (the passages sent to the chat model) are its own")
    func askSourcesAreReadable() async throws {
        let ws = try Workspace("serve-access-ask")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await ws.run(target, expecting: 0)
        let chatKey = "sk-test-\(UUID().uuidString.lowercased())-access"
        let chat = try await StandInServer.launch(
            script: "chat_standin.py",
            arguments: ["--api-key", chatKey, "--model", "test-model", "--max-context-tokens", "2000"]
        )
        defer { chat.stop() }
        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.keys_file=\(ws.file("keys.yaml").path)",
                "--set", "answer.base_url=\(chat.baseURL)/v1", "--set", "answer.model=test-model",
                "--set", "answer.api_key_env=\(AskFixture.keyVariable)", "--set", "answer.max_context_tokens=2000",
            ],
            environment: [AskFixture.keyVariable: chatKey]
        )
        let answer = try await server.client(token: Self.engKey)
            .ask(AskRequest(question: "What about salary payroll?", k: 5))
        #expect(Set(answer.sources.map(\.documentKey)) == Self.engReadable, "\(answer.sources.map(\.documentKey))")
        _ = try await server.stop()
    }

    @Test("the keys file is read again when it changes and on SIGHUP: a removed key stops working, a new one works")
    func keysFileReload() async throws {
        let ws = try Workspace("serve-access-keys")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await ws.run(target, expecting: 0)
        let server = try await Self.serve(ws, target)
        let query = Data(#"{"query": "salary", "k": 3}"#.utf8)
        let auth = { (key: String) in ["Authorization": "Bearer \(key)"] }
        #expect(try await server.exchange("POST", "/v1/search", body: query, headers: auth(Self.engKey)).status == 200)
        #expect(
            try await server.exchange("POST", "/v1/search", body: query, headers: auth(Self.secondEngKey)).status == 401
        )

        try Self.keysFile([
            ("hr-app", Self.hrDigest, "hana", "hr", "search"),
            ("eng-app-2", Self.secondEngDigest, "emil", "eng", "search"),
        ]).write(to: ws.file("keys.yaml"), atomically: true, encoding: .utf8)
        server.process.send(SIGHUP)
        // Waits for the change to be taken (an event), bounded only against a hang.
        let deadline = ContinuousClock.now + .seconds(60)
        var status = 200
        while status != 401 && ContinuousClock.now < deadline {
            status = try await server.exchange("POST", "/v1/search", body: query, headers: auth(Self.engKey)).status
            if status != 401 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(status == 401, "the removed key still works")
        let second = try await server.client(token: Self.secondEngKey).search(
            SearchRequest(query: "salary payroll", k: 5, mode: "vector")
        )
        #expect(Set(second.results.map(\.documentKey)) == Self.engReadable)

        // A malformed file keeps the keys read last (logged), instead of locking every client out.
        try "keys: [{id: broken}]\n".write(to: ws.file("keys.yaml"), atomically: true, encoding: .utf8)
        server.process.send(SIGHUP)
        #expect(
            try await server.exchange("POST", "/v1/search", body: query, headers: auth(Self.secondEngKey)).status == 200
        )
        let result = try await server.stop()
        #expect(result.exitCode == 0, "SIGHUP must not stop the server: \(result)")
    }

    @Test(
        "documents a key may not read, added, change nothing it sees: the same results with the same scores in every mode"
    )
    func hiddenDocumentsChangeNoScore() async throws {
        let ws = try Workspace("serve-access-scores")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await Self.expectHiddenDocumentsChangeNoScore(ws, target, modes: ["vector", "keyword", "hybrid"], "local")
    }

    /// Runs `target` and asks as eng in each of `modes`, then adds thirty payroll documents only hr reads, dense in
    /// the query's words, runs again and asks again: the same results with the same scores, bit for bit (BM25 over
    /// every record would count the new ones in each word's document frequency and the average length).
    static func expectHiddenDocumentsChangeNoScore(
        _ ws: Workspace,
        _ target: Workspace.Target,
        modes: [String],
        _ label: String
    ) async throws {
        func engAnswers() async throws -> [String: [SearchResult]] {
            try await ws.run(target, expecting: 0)
            let server = try await Self.serve(ws, target)
            var answers: [String: [SearchResult]] = [:]
            for mode in modes {
                answers[mode] = try await server.client(token: Self.engKey)
                    .search(SearchRequest(query: "salary payroll contractors", k: 5, mode: mode)).results
            }
            #expect(try await server.stop().exitCode == 0, "\(label)")
            return answers
        }
        let before = try await engAnswers()
        for index in 20..<50 {
            try Corpus.write(
                "Payroll \(index): salary salary payroll contractors, contractors payroll salary \(index).",
                to: ws.corpus.appendingPathComponent("hr/pay-\(index).md")
            )
        }
        let after = try await engAnswers()
        for mode in modes {
            let (was, now) = (before[mode] ?? [], after[mode] ?? [])
            #expect(!was.isEmpty && was.allSatisfy { Self.engReadable.contains($0.documentKey) }, "\(label) \(mode)")
            #expect(now.map(\.documentKey) == was.map(\.documentKey), "\(label) \(mode)")
            #expect(
                now.map(\.score.bitPattern) == was.map(\.score.bitPattern),
                "\(label) \(mode): \(now.map(\.score)) after the hidden documents, \(was.map(\.score)) before"
            )
        }
    }

    @Test("CLI: search --as/--groups reads what the identity may; check validates the keys file")
    func commandLine() async throws {
        let ws = try Workspace("serve-access-cli")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await ws.run(target, expecting: 0)
        let search = try await ws.sluice(
            ["search", "salary payroll", ws.pipeline.path] + target.arguments
                + ["-k", "5", "--mode", "vector", "--as", "emil", "--groups", "eng", "--json"]
        )
        #expect(search.exitCode == 0, "\(search)")
        let keys = search.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["document_key"] as? String
        }
        #expect(Set(keys) == Self.engReadable, "\(keys)")

        let keysSetting = ["--set", "serve.keys_file=\(ws.file("keys.yaml").path)"]
        let valid = try await ws.sluice(["check", ws.pipeline.path] + target.arguments + keysSetting)
        #expect(valid.exitCode == 0 && valid.stdout.contains("3 keys"), "\(valid)")
        try Self.keysFile([("x", "not-a-digest", "p", "g", "search")])
            .write(to: ws.file("keys.yaml"), atomically: true, encoding: .utf8)
        let invalid = try await ws.sluice(["check", ws.pipeline.path] + target.arguments + keysSetting)
        #expect(invalid.exitCode != 0 && invalid.stdout.contains("sha256"), "\(invalid)")
    }

    /// Changing a document's readers writes its records again, their vectors from the embedding cache.
    @Test("access.default allow → deny: the records are written again without embedding; the handbook is then hidden")
    func changingAccessRewritesWithoutEmbedding() async throws {
        let ws = try Workspace("serve-access-rewrite")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try await ws.run(target, expecting: 0)
        let stats = ws.file("stats.json")
        try await ws.run(target, ["--set", "access.default=deny", "--stats-json", stats.path], expecting: 0)
        let figures = try ws.stats(stats)
        #expect(figures.decoded.documentsUpserted == 26 && figures.decoded.chunksEmbedded == 0, "\(figures.values)")
        let search = try await ws.sluice(
            ["search", "salary payroll", ws.pipeline.path] + target.arguments
                + ["--set", "access.default=deny", "-k", "5", "--mode", "vector", "--groups", "eng", "--json"]
        )
        let keys = search.stdout.split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["document_key"] as? String
        }
        #expect(Set(keys) == Self.engReadable.subtracting(["handbook.md"]), "\(keys)")
    }
}
