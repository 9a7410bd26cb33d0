import Foundation
import SluiceCore
import Testing

/// A file of the source replaced by a symbolic link to a secret while a run is under way: the scanner saw a
/// regular file, but what is read afterwards (by the pipeline, by an extractor in process, by a worker
/// process) must be that file, never the link's target. The swap happens at a debug pause (see
/// `DebugPause`), not in a race with the run.
@Suite(.serialized)
struct SymlinkSwapCLITests {
    static let secretText = "TOP SECRET: the launch code is 0000, do not index this.\n"

    /// Starts a run paused at `point` for `key`, replaces the file by a link to `target`, and lets it go on.
    static func runSwapping(
        _ ws: Workspace,
        _ target: Workspace.Target,
        key: String,
        at point: String,
        linkTo linkTarget: URL,
        settings: [String] = []
    ) async throws -> CommandResult {
        let resume = ws.root.appendingPathComponent("resume-\(point)")
        let process = try ws.start(
            ws.runArguments(target, settings),
            environment: ["SLUICE_DEBUG_PAUSE_\(point)": key, "SLUICE_DEBUG_RESUME": resume.path]
        )
        let paused = await process.waitForStderr(containing: "sluice-debug: paused at \(point)", timeout: .seconds(600))
        try #require(paused, "never paused at \(point): \(process.stderrSoFar)")
        let file = ws.corpus.appendingPathComponent(key)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: linkTarget.path)
        _ = FileManager.default.createFile(atPath: resume.path, contents: nil)
        return try await process.wait(timeout: .seconds(240))
    }

    @Test("a text file swapped for a link to a secret before it is read fails; the secret is not indexed")
    func textSwappedBeforeTheRead() async throws {
        let ws = try Workspace("swap-text")
        defer { ws.cleanUp() }
        let secret = ws.root.appendingPathComponent("secret.txt")
        try Corpus.write(Self.secretText, to: secret)
        try Corpus.write(
            "A harmless note.\n\nNothing to see here.\n",
            to: ws.corpus.appendingPathComponent("notes/a.txt")
        )
        try Corpus.write("Another note, left alone.\n", to: ws.corpus.appendingPathComponent("notes/b.txt"))
        let main = ws.target("main")
        let result = try await Self.runSwapping(ws, main, key: "notes/a.txt", at: "READ", linkTo: secret)
        #expect(result.exitCode == 2, "\(result)")
        let status = try await ws.status(main)
        #expect(status.failures["notes/a.txt"]?.contains("symbolic link") == true, "\(status.text)")
        let export = String(decoding: try await ws.export(main), as: UTF8.self)
        #expect(!export.contains("launch code"), "the secret was indexed")
        #expect(export.contains("left alone"))
    }

    @Test(
        "a PDF swapped for a link to another PDF before the extractor opens it again fails; the other PDF is not indexed",
        arguments: [true, false]
    )
    func pdfSwappedBeforeTheExtractorOpensIt(isolated: Bool) async throws {
        let ws = try Workspace("swap-pdf")
        defer { ws.cleanUp() }
        let samples = ExtractionCLITests.samples
        let secret = ws.root.appendingPathComponent("secret.pdf")
        try FileManager.default.copyItem(at: samples.appendingPathComponent("pdf/zlib-two-column.pdf"), to: secret)
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("pdf/xz-utils-faq.pdf"),
            to: ws.corpus.appendingPathComponent("doc.pdf")
        )
        let main = ws.target("main")
        let settings =
            ExtractionCLITests.allFormats + ["--set", "extract.isolate=\(isolated)", "--set", "extract.parallelism=1"]
        let result = try await Self.runSwapping(
            ws,
            main,
            key: "doc.pdf",
            at: "REOPEN",
            linkTo: secret,
            settings: settings
        )
        #expect(result.exitCode == 2, "\(result)")
        let status = try await ws.status(main)
        #expect(status.failures["doc.pdf"]?.contains("replaced") == true, "\(status.text)")
        let export = String(decoding: try await ws.export(main), as: UTF8.self)
        #expect(!export.contains("Jean-loup Gailly"), "the link's target was indexed")
    }

    @Test("a document that became a symbolic link is pruned (not followed: follow_symlinks is off)")
    func documentThatBecameALinkIsPruned() async throws {
        let ws = try Workspace("swap-prune")
        defer { ws.cleanUp() }
        let secret = ws.root.appendingPathComponent("secret.txt")
        try Corpus.write(Self.secretText, to: secret)
        let note = ws.corpus.appendingPathComponent("a.txt")
        try Corpus.write("A harmless note that will become a link.\n", to: note)
        try Corpus.write("Another note, left alone.\n", to: ws.corpus.appendingPathComponent("b.txt"))
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        try FileManager.default.removeItem(at: note)
        try FileManager.default.createSymbolicLink(atPath: note.path, withDestinationPath: secret.path)
        try await ws.run(main, ["--prune", "--allow-mass-delete"], expecting: 0)
        let records = try Export.records(try await ws.export(main))
        #expect(Set(records.map(\.documentKey)) == ["b.txt"], "the old text of a.txt stayed in the index")
        #expect(!records.contains { $0.text.contains("launch code") })
    }
}
