import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluicePipeline

/// Issue 18: include/exclude never leave files out silently, and the default pipeline takes files
/// without an extension (`!(*.*)`, fnmatch's extended pattern).
@Suite struct LeftOutFilesTests {
    @Test func extendedPatternsSelectNamesWithoutADot() {
        let pattern = GlobPattern("**/!(*.*)")
        #expect(pattern.matches("README") && pattern.matches("docs/COPYING") && pattern.matches("a/b/Makefile"))
        #expect(!pattern.matches("notes.txt") && !pattern.matches("a/b.tar.gz") && !pattern.matches(".hidden"))
        #expect(GlobPattern("**/*.@(md|txt)").matches("a/b.md") && !GlobPattern("**/*.@(md|txt)").matches("b.pdf"))
        // Plain globs are as before.
        #expect(GlobPattern("**/*.md").matches("x/y.md") && !GlobPattern("*.md").matches("x/y.md"))
    }

    @Test func theWalkCountsWhatIncludeAndExcludeLeaveOut() async throws {
        let root = try TemporaryDirectory.make()
        defer { TemporaryDirectory.remove(root) }
        for key in ["a.md", "b.txt", "README", "img/logo.svg", "skip/x.md", "skip/y.md", "deep/c.md"] {
            let url = root.appendingPathComponent(key)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data("text".utf8).write(to: url)
        }
        var source = PipelineConfiguration.Source()
        source.include = ["**/*.md"]
        source.exclude = ["skip/**"]
        let scanner = SourceScanner(configuration: source, root: root)
        var selected: [String] = []
        try await scanner.walk { entry in
            if case .success(let file) = entry { selected.append(file.key) }
            return true
        }
        #expect(selected == ["a.md", "deep/c.md"])
        #expect(scanner.leftOut.files == 3 && scanner.leftOut.folders == 1)
        #expect(Set(scanner.leftOut.exampleKeys) == ["README", "b.txt", "img/logo.svg", "skip/"])
        #expect(scanner.leftOut.summary?.hasPrefix("3 files and 1 folder (e.g. ") == true)

        // A run walks twice (a counting walk for progress, then the real one): its report counts once.
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try FileManager.default.removeItem(at: harness.source)
        try FileManager.default.copyItem(at: root, to: harness.source)
        harness.configuration.source.include = ["**/*.md"]
        harness.configuration.source.exclude = ["skip/**"]
        let stats = try await harness.run()
        #expect(stats.filesLeftOut == 3, "each left-out file counted once")

        source.include = ["**/*"]
        source.exclude = []
        let everything = SourceScanner(configuration: source, root: root)
        try await everything.walk { _ in true }
        #expect(everything.leftOut.summary == nil)
    }

    /// `sluice check` does not call the source `ok` while readable files are left out by the include list:
    /// a warning (exit 0) with the count, a few of them and the include patterns that take them in. Files
    /// only `exclude` names are a choice made on purpose, not a warning.
    @Test func checkWarnsOfReadableFilesTheIncludeListLeavesOut() async throws {
        var harness = try PipelineHarness()
        defer { harness.cleanUp() }
        for (key, text) in [
            ("a.md", "# A\n\nSelected."), ("doc/README.Debian", "Notes for Debian."),
            ("doc/NEWS.changelog", "1.0: first."), ("doc/more.changelog", "0.9: before."),
            ("skip/b.txt", "Excluded on purpose."), ("doc/debug.log", "Excluded on purpose too."),
        ] {
            let url = harness.source.appendingPathComponent(key)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try Data(text.utf8).write(to: url)
        }
        harness.configuration.source.include = ["**/*.md"]
        harness.configuration.source.exclude = ["skip/**", "**/*.log"]
        let checks = await harness.pipeline().check()
        let source = try #require(checks.first { $0.subject == "source" })
        #expect(source.outcome == .warning, "\(source)")
        #expect(source.detail.contains("3 readable files"), "\(source)")
        #expect(source.detail.contains("doc/README.Debian"), "\(source)")
        let fix = try #require(source.fix)
        // In the order the walk met them, which is the file system's.
        #expect(fix.contains("\"**/*.Debian\"") && fix.contains("\"**/*.changelog\""), "\(fix)")
        #expect(!fix.contains("*.log"), "\(fix)")
        #expect(fix.contains("source.include"), "\(fix)")
        #expect(DependencyCheck.exitCode(of: checks) == .success, "a warning alone exits 0: \(checks)")

        // Left out by `exclude` only: nothing to warn of.
        harness.configuration.source.include = ["**/*"]
        let excludedOnly = await harness.pipeline().check()
        let quiet = try #require(excludedOnly.first { $0.subject == "source" })
        #expect(quiet.outcome == .ok, "\(quiet)")
    }
}
