import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sink.kind: openai-vector-store` through the `sluice` binary against the validating stand-in of OpenAI's
/// Files and Vector Stores APIs: sample documents loaded as files (the pipeline's embedder not used, and
/// said so), search by text with an attribute filter, an idempotent re-run, a change and a deletion with
/// --prune, verify, and the exit codes of a wrong key (5) and an unreachable API (6).
@Suite(.serialized)
struct OpenAIVectorStoreCLITests {
    static let keyVariable = "SLUICE_TEST_OPENAI_KEY"
    static let samples = [
        "git-README.md", "libxml2-README.md", "pip-getting-started.md", "tesseract-README.md", "zstd-README.md",
        "xxhash-spec.md",
    ]

    static func target(_ ws: Workspace, _ server: StandInServer, key: String = keyVariable) -> Workspace.Target {
        let local = ws.target("openai")
        let settings = [
            "sink.kind=openai-vector-store", "sink.url=\(server.baseURL)/v1", "sink.collection=cli",
            "sink.api_key_env=\(key)", "sink.chunking_max_tokens=200", "sink.chunking_overlap_tokens=50",
        ]
        return Workspace.Target(state: local.state, index: local.index, sink: settings.flatMap { ["--set", $0] })
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test(
        "samples loaded as files, searched with a filter; re-run uploads nothing; change and --prune replace and delete; verify"
    )
    func lifecycle() async throws {
        let ws = try Workspace("openai-vector-store")
        defer { ws.cleanUp() }
        setenv(Self.keyVariable, "sk-cli-\(UInt32.random(in: 0...UInt32.max))", 1)
        let key = ProcessInfo.processInfo.environment[Self.keyVariable]!
        let server = try await StandInServer.launch(
            script: "openai_vector_store_standin.py",
            arguments: ["--api-key", key, "--rate-limit-every", "7"]
        )
        defer { server.stop() }
        let docs = ws.corpus.appendingPathComponent("docs")
        try FileManager.default.createDirectory(at: docs, withIntermediateDirectories: true)
        for name in Self.samples {
            try FileManager.default.copyItem(
                at: StandInServer.repositoryRoot.appendingPathComponent("samples/markdown/\(name)"),
                to: docs.appendingPathComponent(name)
            )
        }
        let target = Self.target(ws, server)

        // 1. Every document a file; the pipeline's embed and chunk settings not used, and said so.
        let first = try await ws.run(target, expecting: 0)
        #expect((first.stdout + first.stderr).contains("not used"), "\(first)")
        var stats = try server.standInStats()
        #expect(stats["uploads"] == Self.samples.count && stats["attaches"] == Self.samples.count, "\(stats)")
        #expect(stats["invalid"] == 0 && (stats["rate_limited"] ?? 0) > 0, "\(stats)")
        #expect(!(first.stdout + first.stderr).contains(key))

        // 2. Search by text, with and without a filter on the document key; keyword mode is refused.
        let search = try await ws.sluice(
            ["search", "tesseract OCR engine language data", "--json", "-k", "3", ws.pipeline.path] + target.arguments
        )
        #expect(search.exitCode == 0, "\(search)")
        let hits = Self.lines(search.stdout)
        #expect(hits.first?["document_key"] as? String == "docs/tesseract-README.md", "\(search.stdout)")
        let filtered = try await ws.sluice(
            [
                "search", "tesseract OCR engine language data", "--json", "-k", "3", "--filter",
                "document_key = \"docs/zstd-README.md\"", ws.pipeline.path,
            ] + target.arguments
        )
        #expect(filtered.exitCode == 0, "\(filtered)")
        let filteredKeys = Self.lines(filtered.stdout).compactMap { $0["document_key"] as? String }
        #expect(!filteredKeys.isEmpty && filteredKeys.allSatisfy { $0 == "docs/zstd-README.md" }, "\(filtered)")
        let keyword = try await ws.sluice(["search", "zstd", "--mode", "keyword", ws.pipeline.path] + target.arguments)
        #expect(keyword.exitCode == 1, "\(keyword)")
        let prefix = try await ws.sluice(
            ["search", "zstd", "--filter", "document_key ^= \"docs/\"", ws.pipeline.path] + target.arguments
        )
        #expect(prefix.exitCode == 1 && prefix.stderr.contains("prefix"), "\(prefix)")

        // 3. A second run with nothing changed uploads nothing.
        try await ws.run(target, expecting: 0)
        stats = try server.standInStats()
        #expect(stats["uploads"] == Self.samples.count, "\(stats)")

        // 4. One document changed, one deleted: --prune replaces the one and deletes the other's file.
        let changed = docs.appendingPathComponent("git-README.md")
        try (String(contentsOf: changed, encoding: .utf8) + "\nA new closing paragraph about rebasing.\n")
            .write(to: changed, atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(at: docs.appendingPathComponent("pip-getting-started.md"))
        try await ws.run(target, ["--prune"], expecting: 0)
        stats = try server.standInStats()
        #expect(stats["uploads"] == Self.samples.count + 1, "\(stats)")
        #expect(stats["detaches"] == 2 && stats["file_deletes"] == 2, "\(stats)")
        let info = try await ws.sluice(["sink", "info", "--json", ws.pipeline.path] + target.arguments)
        #expect(info.exitCode == 0, "\(info)")
        let infoObject = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect(infoObject?["count"] as? Int == Self.samples.count - 1, "\(info)")
        let rebased = try await ws.sluice(
            ["search", "closing paragraph about rebasing", "--json", "-k", "1", ws.pipeline.path] + target.arguments
        )
        #expect(Self.lines(rebased.stdout).first?["document_key"] as? String == "docs/git-README.md", "\(rebased)")

        // 5. verify finds the state and the store agree.
        let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(verify.exitCode == 0, "\(verify)")
    }

    @Test("a wrong key stops the run with exit 5, an unreachable API with exit 6, a missing key variable with exit 1")
    func exitCodes() async throws {
        let ws = try Workspace("openai-vector-store-exits")
        defer { ws.cleanUp() }
        try "a document".write(to: ws.corpus.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        let server = try await StandInServer.launch(
            script: "openai_vector_store_standin.py",
            arguments: ["--api-key", "sk-right"]
        )
        setenv(Self.keyVariable, "sk-wrong-key", 1)
        let refused = try await ws.run(Self.target(ws, server), expecting: 5)
        #expect(!(refused.stdout + refused.stderr).contains("sk-wrong-key"), "\(refused)")
        server.stop()
        try await ws.run(Self.target(ws, server), expecting: 6)
        try await ws.run(Self.target(ws, server, key: "SLUICE_TEST_UNSET_VARIABLE"), expecting: 1)
    }

    @Test("access control on: search --as and ask --as refuse this store (its attributes hold no lists), naming why")
    func accessControlIsRefused() async throws {
        let ws = try Workspace("openai-vector-store-access")
        defer { ws.cleanUp() }
        setenv(Self.keyVariable, "sk-access-\(UInt32.random(in: 0...UInt32.max))", 1)
        let key = ProcessInfo.processInfo.environment[Self.keyVariable]!
        let server = try await StandInServer.launch(
            script: "openai_vector_store_standin.py",
            arguments: ["--api-key", key]
        )
        defer { server.stop() }
        try Corpus.write(
            "---\naccess: [eng]\n---\nThe build cache design for engineers.\n",
            to: ws.corpus.appendingPathComponent("eng/design.md")
        )
        try Corpus.write(
            "The handbook: office hours and holidays.",
            to: ws.corpus.appendingPathComponent("handbook.md")
        )
        try (Workspace.pipelineYAML + "access:\n  enabled: true\n  default: allow\n")
            .write(to: ws.pipeline, atomically: true, encoding: .utf8)
        let target = Self.target(ws, server)
        try await ws.run(target, expecting: 0)

        // The operator (no --as) searches as before.
        let all = try await ws.sluice(["search", "build cache design", "--json", ws.pipeline.path] + target.arguments)
        #expect(
            all.exitCode == 0 && Self.lines(all.stdout).contains { $0["document_key"] as? String == "eng/design.md" }
        )
        // A restricted identity is refused, never served a result filtered afterwards (nor an empty one).
        for command in ["search", "ask"] {
            let restricted = try await ws.sluice(
                [command, "build cache design", "--as", "emil", "--groups", "eng", ws.pipeline.path] + target.arguments
            )
            #expect(restricted.exitCode == 1, "\(command): \(restricted)")
            #expect(
                restricted.stderr.contains("openai-vector-store") && restricted.stderr.contains("list"),
                "\(command): \(restricted)"
            )
        }
        // `sluice serve` refuses to start rather than serve results filtered afterwards.
        let serve = try await ws.sluice(["serve", ws.pipeline.path] + target.arguments + ["--port", "0"])
        #expect(serve.exitCode == 1, "\(serve)")
        #expect(
            serve.stderr.contains("openai-vector-store") && serve.stderr.contains("cannot express the access filter"),
            "\(serve)"
        )
        let searches = try server.standInStats()["searches"] ?? -1
        #expect(searches == 1, "only the operator's search reached the store: \(searches)")
    }
}
