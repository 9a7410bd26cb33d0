import Foundation
import SluiceTesting
import Testing

/// Deprecated settings keys keep working and say so once, naming the new key: on stderr for every command
/// that reads the pipeline file, and as a `pipeline` line of `sluice check`; and `check` names a `sink`
/// key the chosen store does not read (its descriptor says which it reads).
@Suite struct DeprecatedKeysCLITests {
    @Test func aDeprecatedKeyWorksAndNamesItsNewKey() async throws {
        let ws = try Workspace("deprecated-keys")
        defer { ws.cleanUp() }
        try "A sluice gate holds the water back.\n".write(
            to: ws.corpus.appendingPathComponent("gate.txt"),
            atomically: true,
            encoding: .utf8
        )
        let target = ws.target("main")
        let settings = ["--set", "extract.docx.max_inflated_mb=50", "--set", "sink.table=chunks"]
        let check = try await ws.sluice(
            ["check", ws.pipeline.path] + target.arguments + ["--source", ws.corpus.path] + settings
        )
        #expect(check.exitCode == 0, "\(check)")
        let notice = "extract.docx.max_inflated_mb is deprecated: use extract.zip.max_inflated_mb"
        #expect(check.stderr.components(separatedBy: notice).count == 2, "once on stderr: \(check)")
        let pipelineLines = check.stdout.split(separator: "\n").filter {
            $0.hasPrefix("ok ") && $0.contains("pipeline")
        }
        #expect(pipelineLines.contains { $0.contains(notice) }, "\(check)")
        #expect(pipelineLines.contains { $0.contains("sink.table not read by sink.kind local") }, "\(check)")

        // A run reads the old key as the new one, with the same notice.
        let run = try await ws.run(target, settings)
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stderr.contains(notice), "\(run)")
        let plain = try await ws.run(target, ["--set", "extract.zip.max_inflated_mb=50"])
        #expect(plain.exitCode == 0 && !plain.stderr.contains("is deprecated"), "\(plain)")
    }

    @Test func theOldAttemptsKeyWorksWithOneNoticeNamingTheNewKey() async throws {
        let ws = try Workspace("deprecated-sink-retries")
        defer { ws.cleanUp() }
        try Corpus.write(count: 2, into: ws.corpus, seed: 0x5EED_3001, maxBytes: 2_000)
        var target = ws.target("main")
        target.sink = ["--set", "sink.retries=3"]
        let run = try await ws.run(target)
        #expect(run.exitCode == 0, "\(run)")
        let notices = run.stderr.split(separator: "\n").filter { $0.contains("sink.retries is deprecated") }
        #expect(notices.count == 1, "\(run)")
        #expect(notices.first?.contains("use sink.max_retries") == true, "\(run)")

        target.sink = ["--set", "sink.max_retries=2"]
        let quiet = try await ws.run(target)
        #expect(quiet.exitCode == 0, "\(quiet)")
        #expect(!quiet.stderr.contains("is deprecated"), "\(quiet)")
    }
}
