import Foundation
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A user's mistake exits as one (issue 30): 1 with the fix, never 70 ("a bug") or 6 ("retry later"); the
/// lock held by a run is 3 for `check` as for `run`; `run --dry-run` refuses what the run would refuse; and
/// `check --json` answers in JSON even when the pipeline file itself is wrong.
@Suite struct UserMistakeExitCodesCLITests {
    @Test("status on a state this user cannot write exits 1 and says whose it is, not 70")
    func statusOnAStateThisUserCannotWrite() async throws {
        let ws = try Workspace("status-unwritable")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x5EED_3001, maxBytes: 2_000)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let arguments = ["status", ws.pipeline.path] + main.arguments
        let result: CommandResult
        if getuid() == 0 {
            // Root writes anywhere: run the status as `nobody`, for whom the state (root's, 0755) is read-only.
            let binary = try SluiceExecutable.url().path
            result = try await ws.start(
                ["--reuid=65534", "--regid=65534", "--clear-groups", binary] + arguments,
                environment: ["TMPDIR": "/tmp"],
                executable: URL(fileURLWithPath: "/usr/bin/setpriv")
            ).wait(timeout: .seconds(60))
        } else {
            for name in ["lock.mdb", "data.mdb"] { chmod(main.state.appendingPathComponent(name).path, 0o444) }
            chmod(main.state.path, 0o555)
            defer { chmod(main.state.path, 0o755) }
            result = try await ws.sluice(arguments)
        }
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("permission denied"), "\(result)")
        #expect(result.stderr.contains(main.state.path), "\(result)")
    }

    @Test("check while a run holds the lock exits 3, as run does")
    func checkWhileLockedExitsThree() async throws {
        let ws = try Workspace("check-locked")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x5EED_3002, maxBytes: 2_000)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let descriptor = open(main.state.appendingPathComponent("run.lock").path, O_RDWR)
        try #require(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        defer {
            flock(descriptor, LOCK_UN)
            close(descriptor)
        }
        let arguments = ["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path]
        let text = try await ws.sluice(arguments)
        #expect(text.exitCode == 3, "\(text)")
        #expect(text.stdout.contains("locked"), "\(text)")
        let json = try await ws.sluice(arguments + ["--json"])
        #expect(json.exitCode == 3, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["exit_code"] as? Int == 3, "\(json)")
        let run = try await ws.run(main)
        #expect(run.exitCode == 3, "\(run)")
    }

    @Test("check --json prints JSON when the pipeline file itself is wrong")
    func checkJSONOnABrokenPipelineFile() async throws {
        let ws = try Workspace("check-json-broken")
        defer { ws.cleanUp() }
        let main = ws.target("main")
        for broken in ["source: [unclosed", "chunk: { max_tokenz: 3 }"] {
            try broken.write(to: ws.pipeline, atomically: true, encoding: .utf8)
            let result = try await ws.sluice(["check", ws.pipeline.path, "--json"] + main.arguments)
            #expect(result.exitCode == 1, "\(result)")
            let object = try #require(
                try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
                "not JSON: \(result)"
            )
            #expect(object["exit_code"] as? Int == 1)
            let checks = try #require(object["checks"] as? [[String: Any]])
            #expect(checks.count == 1)
            #expect(checks.first?["subject"] as? String == "pipeline")
            #expect(checks.first?["outcome"] as? String == "failed")
        }
    }

    @Test("run --dry-run refuses an embedder mismatch as the run does (exit 1, --reembed named)")
    func dryRunRefusesAnEmbedderMismatch() async throws {
        let ws = try Workspace("dry-run-mismatch")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x5EED_3003, maxBytes: 2_000)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let other = ["--set", "embed.dimensions=32"]
        let real = try await ws.run(main, other)
        #expect(real.exitCode == 1, "\(real)")
        let dry = try await ws.run(main, other + ["--dry-run"])
        #expect(dry.exitCode == 1, "\(dry)")
        #expect(dry.stderr.contains("--reembed"), "\(dry)")
        // With --reembed the dry run goes on (everything would be embedded again).
        let reembed = try await ws.run(main, other + ["--dry-run", "--reembed"])
        #expect(reembed.exitCode == 0, "\(reembed)")
    }
}
