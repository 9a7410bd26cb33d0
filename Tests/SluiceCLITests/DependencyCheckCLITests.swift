import Foundation
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `sluice check` and the exit codes cron acts on (issue 18): 6 when the store or the embedder cannot be
/// reached (nothing marked failed, the next run after it is back succeeds), 7 for a refused mass delete
/// (in `SluiceCLITests.massDeleteGuard`), and a Qdrant that needs no key. A port with nothing listening is
/// the dead dependency; nothing here waits on a clock.
@Suite(.serialized)
struct DependencyCheckCLITests {
    /// Nothing listens on port 1: connections are refused at once.
    static let deadURL = "http://127.0.0.1:1"

    /// The lines of a `check`'s output whose outcome is `outcome`, by subject.
    static func lines(_ stdout: String, _ outcome: String) -> [String] {
        stdout.split(separator: "\n").filter { $0.hasPrefix(outcome + " ") }.map(String.init)
    }

    static func subjects(_ stdout: String, _ outcome: String) -> Set<String> {
        Set(
            lines(stdout, outcome).compactMap {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
            }
        )
    }

    @Test("check passes on the default local pipeline (MiniLM, the local store) and reads what a run wrote")
    func checkPassesOnTheDefaultPipeline() async throws {
        let ws = try Workspace("check-default")
        defer { ws.cleanUp() }
        let fresh = ws.target("default")
        let defaultPipeline = Corpus.repositoryRoot.appendingPathComponent("Pipelines/default.yaml").path
        let result = try await ws.sluice(["check", defaultPipeline] + fresh.arguments)
        #expect(result.exitCode == 0, "\(result)")
        #expect(
            Self.subjects(result.stdout, "ok") == ["pipeline", "embedder", "store", "source", "state"],
            "\(result)"
        )
        #expect(result.stdout.contains("384 dimensions"), "\(result)")

        try Corpus.write(count: 5, into: ws.corpus, seed: 0x5EED_1801, maxBytes: 4_000)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let after = try await ws.sluice(["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path])
        #expect(after.exitCode == 0, "\(after)")
        #expect(after.stdout.contains("5 files match"), "\(after)")
        #expect(after.stdout.contains("5 documents"), "\(after)")

        // A run in progress (its lock held, here by this process): exit 3, as `run` exits then.
        let descriptor = open(main.state.appendingPathComponent("run.lock").path, O_RDWR)
        try #require(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        let busy = try await ws.sluice(["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path])
        flock(descriptor, LOCK_UN)
        close(descriptor)
        #expect(busy.exitCode == 3, "\(busy)")
        #expect(Self.subjects(busy.stdout, "locked") == ["state"], "\(busy)")

        // Another embedder than the state's: a configuration error, with its fix.
        let mismatch = try await ws.sluice(
            ["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path, "--set", "embed.dimensions=32"]
        )
        #expect(mismatch.exitCode == 1, "\(mismatch)")
        #expect(Self.subjects(mismatch.stdout, "failed").contains("state"), "\(mismatch)")
        #expect(mismatch.stdout.contains("--reembed"), "\(mismatch)")
    }

    @Test(
        "a store that cannot be reached: check, run and run --dry-run exit 6, nothing marked failed; the next run succeeds"
    )
    func deadStoreExitsSix() async throws {
        let ws = try Workspace("check-dead-store")
        defer { ws.cleanUp() }
        try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_1802, maxBytes: 4_000)
        let qdrant = try await StandInServer.launch(script: "qdrant_standin.py")
        defer { qdrant.stop() }
        var target = ws.target("main")
        let store = ["--set", "sink.kind=qdrant", "--set", "sink.collection=c", "--set", "sink.max_retries=1"]
        target.sink = store + ["--set", "sink.url=\(Self.deadURL)"]

        let check = try await ws.sluice(["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path])
        #expect(check.exitCode == 6, "\(check)")
        #expect(Self.subjects(check.stdout, "unavailable") == ["store"], "\(check)")
        #expect(check.stdout.contains("fix:"), "\(check)")

        let run = try await ws.run(target)
        #expect(run.exitCode == 6, "\(run)")
        #expect(run.stderr.contains("cannot be reached"), "\(run)")
        let dry = try await ws.sluice(ws.runArguments(target, ["--dry-run"]))
        #expect(dry.exitCode == 6, "\(dry)")
        #expect(try await ws.status(target).documents["failed"] == nil)

        target.sink = store + ["--set", "sink.url=\(qdrant.baseURL)"]
        try await ws.run(target, expecting: 0)
        #expect(try await ws.status(target).documents == ["indexed": 6])
        let healthy = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path]
        )
        #expect(healthy.exitCode == 0, "\(healthy)")
    }

    @Test("an embedder that cannot be reached: run and check exit 6, nothing marked failed; the next run succeeds")
    func deadEmbedderExitsSix() async throws {
        let ws = try Workspace("check-dead-embedder")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 4, into: ws.corpus, seed: 0x5EED_1803, maxBytes: 4_000)
        let server = try await StandInServer.launch(script: "openai_standin.py", arguments: ["--dims", "32"])
        defer { server.stop() }
        func embed(_ baseURL: String) -> [String] {
            [
                "--set", "embed.provider=openai", "--set", "embed.base_url=\(baseURL)/v1", "--set",
                "embed.model=text-embedding-3-small",
                "--set", "embed.dimensions=32", "--set", "embed.max_retries=1",
            ]
        }
        let target = ws.target("main")
        try await ws.run(target, embed(server.baseURL), expecting: 0)
        try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_1804, maxBytes: 4_000, prefix: "new")

        let run = try await ws.run(target, embed(Self.deadURL))
        #expect(run.exitCode == 6, "\(run)")
        #expect(run.stderr.contains("cannot be reached"), "\(run)")
        #expect(try await ws.status(target).documents == ["indexed": keys.count], "a document was marked failed")
        let check = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path] + embed(Self.deadURL)
        )
        #expect(check.exitCode == 6, "\(check)")
        #expect(Self.subjects(check.stdout, "unavailable") == ["embedder"], "\(check)")

        try await ws.run(target, embed(server.baseURL), expecting: 0)
        #expect(try await ws.status(target).documents == ["indexed": keys.count + 3])
        let healthy = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path] + embed(server.baseURL)
        )
        #expect(healthy.exitCode == 0, "\(healthy)")
        #expect(Self.subjects(healthy.stdout, "ok").contains("embedder"), "\(healthy)")
    }

    @Test("a local Qdrant that needs no key works though sink.api_key_env names an unset variable")
    func qdrantWithoutAKey() async throws {
        let ws = try Workspace("qdrant-no-key")
        defer { ws.cleanUp() }
        try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_1805, maxBytes: 4_000)
        let qdrant = try await StandInServer.launch(script: "qdrant_standin.py")
        defer { qdrant.stop() }
        var target = ws.target("main")
        target.sink = [
            "--set", "sink.kind=qdrant", "--set", "sink.url=\(qdrant.baseURL)", "--set", "sink.collection=nokey",
            "--set", "sink.api_key_env=SLUICE_TEST_UNSET_QDRANT_KEY",
        ]
        let unset: [String: String?] = ["SLUICE_TEST_UNSET_QDRANT_KEY": nil]
        let run = try await ws.sluice(ws.runArguments(target), environment: unset)
        #expect(run.exitCode == 0, "\(run)")
        let check = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path],
            environment: unset
        )
        #expect(check.exitCode == 0, "\(check)")
    }
}
