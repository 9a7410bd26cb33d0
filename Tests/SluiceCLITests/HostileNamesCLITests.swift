import Foundation
import SluiceCore
import Testing

/// File names are data from whoever can write into the source: control characters in them must not forge
/// log lines or reach the terminal as escape sequences,.
@Suite struct HostileNamesCLITests {
    /// A name with a line break (a forged log line), one with BEL and an ANSI escape, one with the C1
    /// control-sequence introducer.
    static let forging = "ok\nFORGED level=critical something happened.txt"
    static let escaping = "bell\u{07}esc\u{1B}[31mred.txt"
    static let c1 = "csi\u{9B}31m.txt"

    @Test("control characters of file names are escaped in logs, dry run, status and search; no line is forged")
    func controlCharactersAreEscaped() async throws {
        let ws = try Workspace("names")
        defer { ws.cleanUp() }
        try Corpus.write("A document with a hostile name.\n\nIts text is fine, and it is indexed.\n", to: ws.corpus.appendingPathComponent(Self.forging))
        for name in [Self.escaping, Self.c1] { try Corpus.write("", to: ws.corpus.appendingPathComponent(name)) }  // empty: they fail
        let main = ws.target("main")
        let forgingShown = "ok\\nFORGED level=critical something happened.txt"
        let escapingShown = "bell\\x07esc\\x1B[31mred.txt"
        let c1Shown = "csi\\u{9B}31m.txt"

        let dryRun = try await ws.sluice(ws.runArguments(main, ["--dry-run"]))
        #expect(dryRun.exitCode == 0, "\(dryRun)")
        #expect(dryRun.stdout.contains("add  \(forgingShown)"), "\(dryRun.stdout)")
        let run = try await ws.run(main, expecting: 2)
        #expect(run.stderr.contains(escapingShown) && run.stderr.contains(c1Shown), "\(run.stderr)")
        let status = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(status.stdout.contains("  \(escapingShown): empty-document"), "\(status.stdout)")
        #expect(status.stdout.contains("  \(c1Shown): empty-document"), "\(status.stdout)")
        let search = try await ws.sluice(["search", "a document with a hostile name", ws.pipeline.path] + main.arguments)
        #expect(search.stdout.contains(forgingShown), "\(search.stdout)")

        for result in [dryRun, run, status, search] {
            for output in [result.stdout, result.stderr] {
                #expect(!output.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" }, "a control character reached the terminal: \(result)")
                #expect(!output.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "a forged line: \(result)")
            }
        }
        // Exported records keep the real key: escaping is for display only.
        let records = try Export.records(try await ws.export(main))
        #expect(Set(records.map(\.documentKey)) == [Self.forging])
    }
}
