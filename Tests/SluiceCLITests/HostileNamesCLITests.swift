import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// File names are data from whoever can write into the source: control characters in them must not forge
/// log lines or reach the terminal as escape sequences, and names that are not UTF-8 must not vanish.
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
        try Corpus.write(
            "A document with a hostile name.\n\nIts text is fine, and it is indexed.\n",
            to: ws.corpus.appendingPathComponent(Self.forging)
        )
        // empty: they fail
        for name in [Self.escaping, Self.c1] { try Corpus.write("", to: ws.corpus.appendingPathComponent(name)) }
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
        let search = try await ws.sluice(
            ["search", "a document with a hostile name", ws.pipeline.path] + main.arguments
        )
        #expect(search.stdout.contains(forgingShown), "\(search.stdout)")

        for result in [dryRun, run, status, search] {
            for output in [result.stdout, result.stderr] {
                #expect(
                    !output.contains { $0 == "\u{1B}" || $0 == "\u{07}" || $0 == "\u{9B}" },
                    "a control character reached the terminal: \(result)"
                )
                #expect(!output.split(separator: "\n").contains { $0.hasPrefix("FORGED") }, "a forged line: \(result)")
            }
        }
        // Exported records keep the real key: escaping is for display only.
        let records = try Export.records(try await ws.export(main))
        #expect(Set(records.map(\.documentKey)) == [Self.forging])
    }

    /// Creates a file or folder whose relative path is raw bytes (not necessarily UTF-8) inside `folder`.
    static func create(_ name: [UInt8], in folder: URL, directory: Bool = false, contents: String = "") throws {
        let path = Array(folder.path.utf8) + [UInt8(ascii: "/")] + name + [0]
        try path.withUnsafeBufferPointer { buffer in
            try buffer.withMemoryRebound(to: CChar.self) { cPath in
                if directory {
                    guard mkdir(cPath.baseAddress!, 0o755) == 0 else { throw POSIXError(.init(rawValue: errno)!) }
                    return
                }
                let fd = open(cPath.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard fd >= 0 else { throw POSIXError(.init(rawValue: errno)!) }
                defer { close(fd) }
                let bytes = Array(contents.utf8)
                _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            }
        }
    }

    @Test("files and folders whose names are not UTF-8 fail with a reason (escaped key), every run, and are not pruned")
    func namesThatAreNotUTF8FailWithAReason() async throws {
        let ws = try Workspace("latin1")
        defer { ws.cleanUp() }
        try Corpus.write("A fine document.\n\nIt is indexed.\n", to: ws.corpus.appendingPathComponent("good.txt"))
        let text = "Un document en Latin-1.\n\nSon nom n'est pas de l'UTF-8.\n"
        try Self.create(Array("caf".utf8) + [0xE9] + Array(".txt".utf8), in: ws.corpus, contents: text)
        try Self.create(Array("r".utf8) + [0xE9, 0xE9] + Array("l".utf8), in: ws.corpus, directory: true)
        try Self.create(Array("r".utf8) + [0xE9, 0xE9] + Array("l/inner.txt".utf8), in: ws.corpus, contents: text)
        let main = ws.target("main")

        let first = try await ws.run(main, expecting: 2)
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": 1, "failed": 2], "\(status.text)\n\(first)")
        #expect(status.failures["caf\\xE9.txt"]?.contains("not valid UTF-8") == true, "\(status.failures)")
        #expect(status.failures["r\\xE9\\xE9l"]?.contains("not valid UTF-8") == true, "\(status.failures)")

        // Still there: failed again (exit 2), not pruned.
        let stats = ws.file("second.stats.json")
        try await ws.run(main, ["--prune", "--stats-json", stats.path], expecting: 2)
        #expect(try ws.stats(stats)["documents_pruned"] == 0)
        #expect(try await ws.status(main).failures.count == 2)
    }
}
