import Foundation
import SluiceTesting
import Testing

/// A deprecated settings key keeps working, and the CLI says once, on standard error, which key replaces it.
@Suite struct DeprecatedKeysCLITests {
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
