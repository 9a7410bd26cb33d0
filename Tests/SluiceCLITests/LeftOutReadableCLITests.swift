import Foundation
import SluiceTesting
import Testing

/// Files `source.include` passes over that Sluice could read (`README.Debian`, `*.changelog`: text by their
/// content) are named with the patterns that take them in, by `check` and by `run` (issue 30); compressed
/// and binary files are left out without such a hint.
@Suite struct LeftOutReadableCLITests {
    @Test("check and run name the left-out files Sluice could read, and the include patterns that take them in")
    func readableLeftOutFilesAreNamedWithTheirPatterns() async throws {
        let ws = try Workspace("left-out-readable")
        defer { ws.cleanUp() }
        try Corpus.write("An indexed note.\n", to: ws.corpus.appendingPathComponent("doc/note.txt"))
        try Corpus.write(
            "Debian notes for this package.\n\nIt is built with the usual tools.\n",
            to: ws.corpus.appendingPathComponent("doc/README.Debian")
        )
        try Corpus.write(
            "2026-11-01 Version 1.2: fixed the parser.\n",
            to: ws.corpus.appendingPathComponent("doc/tool.changelog")
        )
        // gzip-compressed text and binary bytes: left out, not suggested.
        try Data([0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x01, 0x02, 0x00])
            .write(to: ws.corpus.appendingPathComponent("doc/changelog.Debian.gz"))
        try Data([0x00, 0x01, 0x02, 0xFF, 0xFE, 0x00, 0x7F, 0x45, 0x4C, 0x46])
            .write(to: ws.corpus.appendingPathComponent("doc/blob.bin"))
        let main = ws.target("main")

        let check = try await ws.sluice(["check", ws.pipeline.path] + main.arguments + ["--source", ws.corpus.path])
        #expect(check.exitCode == 0, "\(check)")
        let source = check.stdout.split(separator: "\n").first { $0.contains("source") }.map(String.init) ?? ""
        // Not `ok`: a warning (exit 0 all the same), with the count, a few of them and the fix.
        #expect(source.hasPrefix("warning "), "\(check)")
        #expect(source.contains("2 readable files are left out by source.include"), "\(check)")
        #expect(source.contains("doc/README.Debian") && source.contains("left out in all: 4 files"), "\(check)")
        #expect(source.contains(#"fix: add "#), "\(check)")
        #expect(source.contains(#""**/*.Debian""#) && source.contains(#""**/*.changelog""#), "\(check)")
        #expect(!source.contains(#"*.gz""#) && !source.contains(#"*.bin""#), "\(check)")

        let run = try await ws.run(main, expecting: 0)
        #expect(run.stderr.contains("2 of them look readable"), "\(run)")
        #expect(run.stderr.contains(#""**/*.Debian""#), "\(run)")

        // Taken in as the hint says: both are indexed as text.
        let include = #"source.include=["**/*.txt", "**/*.md", "**/*.Debian", "**/*.changelog"]"#
        let taken = try await ws.run(main, ["--set", include], expecting: 0)
        #expect(!taken.stderr.contains("look readable"), "\(taken)")
        let status = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(status.stdout.contains("3 indexed"), "\(status)")
    }
}
