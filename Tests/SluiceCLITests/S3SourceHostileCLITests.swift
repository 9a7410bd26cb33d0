import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// What session 46's campaign found the S3 source doing with hostile listings and keys, each seen failing
/// before its fix: a key with `..` segments read as another object (libcurl removed the segments), and a
/// listing that repeats its first page forever (a run that never ends, holding the state's lock).
@Suite(.serialized)
struct S3SourceHostileCLITests {
    @Test("keys with . and .. segments are their own objects, not the objects their paths would normalize to")
    func dotSegmentsAreNames() async throws {
        let ws = try Workspace("s3-dots")
        defer { ws.cleanUp() }
        let bucket = try await S3SourceCLITests.Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        let objects = [
            "sub/../report.txt": "The quarterly report draft, kept under a name with dots.",
            "report.txt": "A different object: the final board minutes.",
            "./notes.txt": "Notes under a key that starts with a dot segment.",
        ]
        for (key, text) in objects { try await bucket.put("docs/" + key, text) }
        let main = ws.target("main")
        let run = try await S3SourceCLITests.run(ws, main)
        #expect(run.exitCode == 0, "\(run)")
        let content = try await S3SourceCLITests.content(ws, main, pipeline: ws.file("s3.yaml"))
        for (key, text) in objects {
            #expect(content.contains { $0.contains(" \(key) ") && $0.hasSuffix(text) }, "\(key): \(content)")
        }
    }

    @Test("a listing that repeats its pages stops the run (exit 6) instead of listing forever; nothing is pruned")
    func repeatingListingStops() async throws {
        let ws = try Workspace("s3-repeat")
        defer { ws.cleanUp() }
        let bucket = try await S3SourceCLITests.Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        for index in 0..<5 { try await bucket.put("docs/doc\(index).txt", "Document \(index) about sluice gates.") }
        let main = ws.target("main")
        #expect(try await S3SourceCLITests.run(ws, main).exitCode == 0)
        let before = try await S3SourceCLITests.content(ws, main, pipeline: ws.file("s3.yaml"))
        try await bucket.faults(repeatLists: true)
        let repeated = try await S3SourceCLITests.run(ws, main, ["--prune"])
        #expect(repeated.exitCode == 6, "\(repeated)")
        #expect(repeated.stderr.contains("repeats"), "\(repeated)")
        #expect(try await S3SourceCLITests.content(ws, main, pipeline: ws.file("s3.yaml")) == before)
    }

    @Test("a repeated listing page is refused before its objects are handed on: no object is read twice")
    func repeatedPageIsNotReadTwice() async throws {
        let ws = try Workspace("s3-repeat-once")
        defer { ws.cleanUp() }
        let bucket = try await S3SourceCLITests.Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        for index in 0..<5 { try await bucket.put("docs/doc\(index).txt", "Document \(index) about weirs.") }
        try await bucket.faults(repeatLists: true)
        let before = try await bucket.stats()
        let stats = ws.file("repeat.stats.json")
        let run = try await S3SourceCLITests.run(ws, ws.target("fresh"), ["--stats-json", stats.path])
        #expect(run.exitCode == 6, "\(run)")
        let gets = try await bucket.stats().get - before.get
        // The first page's five objects may be read (the run stops at the second page); none twice.
        #expect(gets <= 5, "GET object requests: \(gets)")
        // The run stopped on an error: its stats file says so, with the figures reached (it wrote none before).
        let counts = try ws.stats(stats)
        #expect((counts["documents_upserted"] ?? 0) <= 5, "\(counts)")
        #expect(counts.decoded.stopped?.exitCode == 6, "\(counts)")
        #expect(counts.decoded.stopped?.reason.contains("repeats") == true, "\(counts)")
    }
}
