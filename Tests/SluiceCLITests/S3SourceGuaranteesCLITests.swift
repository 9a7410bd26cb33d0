import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The folder source's guarantees that `S3SourceCLITests.lifecycle` does not show, on `source.kind: s3`
/// against moto's server on loopback (issue 34): `--dry-run` (from the listing alone: no GET, nothing
/// written), known failures (an object that failed for good is not downloaded again while its ETag stays),
/// `--shard K/N` (the shards' objects together are the whole bucket's, each downloaded by one shard) and the
/// mass-delete guard (a listing that comes back empty deletes nothing without `--allow-mass-delete`), an object
/// over `extract.max_file_mb` never downloaded, and the stats' `fetch` row (requests, bytes downloaded, request
/// latency).
@Suite(.serialized)
struct S3SourceGuaranteesCLITests {
    typealias Bucket = S3SourceCLITests.Bucket

    /// `sluice run` of the S3 pipeline, with its statistics: (result, stats, GETs it made at the server).
    static func run(
        _ ws: Workspace,
        _ bucket: Bucket,
        _ target: Workspace.Target,
        _ name: String,
        _ extra: [String] = []
    ) async throws -> (result: CommandResult, stats: RunStatsJSON?, gets: Int, lists: Int) {
        let before = try await bucket.stats()
        let statsURL = ws.file("\(name).stats.json")
        let result = try await S3SourceCLITests.run(ws, target, ["--stats-json", statsURL.path] + extra)
        let after = try await bucket.stats()
        return (result, try? ws.stats(statsURL), after.get - before.get, after.list - before.list)
    }

    /// The document keys of a target's export.
    static func keys(_ ws: Workspace, _ target: Workspace.Target) async throws -> Set<String> {
        Set(try await S3SourceCLITests.content(ws, target).map { String($0.split(separator: " ")[1]) })
    }

    @Test("dry run, known failures, --shard K/N, the mass-delete guard and the fetch row on an S3 bucket")
    func guarantees() async throws {
        let ws = try Workspace("s3-guarantees")
        defer { ws.cleanUp() }
        let bucket = try await Bucket.launch(for: ws)
        defer { bucket.server.stop() }

        var rng = SeededGenerator(seed: 0x53_0035)
        var files: [String: String] = [:]
        for index in 0..<8 {
            files["\(Corpus.folders[index % Corpus.folders.count])/doc-\(index).md"] =
                Corpus.document(index: index, markdown: true, bytes: 2_000, rng: &rng)
        }
        for (key, text) in files { try await bucket.put("docs/" + key, text) }
        // An empty object: a failure that cannot change while its bytes stay the same (docs/DESIGN.md §11).
        try await bucket.put("docs/notes/empty.txt", "")
        let keys = files.keys.sorted()
        let main = ws.target("main")

        // 1. A dry run before the first run: every object to add, from the listing alone (no GET), and no
        // state folder made.
        let gets0 = try await bucket.stats().get
        let firstDry = try await ws.sluice(
            ["run", ws.file("s3.yaml").path, "--dry-run"] + main.arguments,
            environment: S3SourceCLITests.environment
        )
        #expect(firstDry.exitCode == 0, "\(firstDry)")
        #expect(firstDry.stdout.hasPrefix("dry run: 9 to add, 0 changed"), "\(firstDry.stdout)")
        #expect(try await bucket.stats().get == gets0, "a dry run downloads nothing")
        #expect(!FileManager.default.fileExists(atPath: main.state.path), "a dry run makes no state folder")

        // 2. The first run: the empty object fails (exit 2), one GET per object.
        let first = try await Self.run(ws, bucket, main, "first")
        #expect(first.result.exitCode == 2, "\(first.result)")
        #expect(first.stats?["documents_failed"] == 1)
        #expect(first.stats?["documents_upserted"] == 8)
        #expect(first.gets == 9)
        // The stats' fetch row: every request the source made (LIST pages and GETs, as counted at the
        // server), the bytes downloaded and each request's latency.
        let fetch = first.stats?.decoded.phases.first { $0.name == "fetch" }
        #expect(fetch?.itemsOut == first.lists + first.gets, "\(String(describing: fetch))")
        #expect(fetch?.bytes == files.values.reduce(0) { $0 + $1.utf8.count })
        #expect((fetch?.latencyQuantile(0.5) ?? 0) > 0)
        #expect(first.stats?.decoded.phases.first?.name == "scan", "the fetch row follows the scan's")

        // 3. The next run: the failure is known while the object's ETag stays: not downloaded again, exit 0.
        let second = try await Self.run(ws, bucket, main, "second")
        #expect(second.result.exitCode == 0, "\(second.result)")
        #expect(second.stats?["documents_known_failures"] == 1)
        #expect(second.gets == 0, "a known failure is not downloaded again")
        let exported = try await S3SourceCLITests.content(ws, main)

        // 4. Changed, deleted, added: a dry run with --prune names each, from the listing (no GET), and
        // changes nothing.
        files[keys[1]] = Corpus.document(index: 101, markdown: true, bytes: 2_500, rng: &rng)
        try await bucket.put("docs/" + keys[1], files[keys[1]]!)
        files[keys[4]] = nil
        try await bucket.delete("docs/" + keys[4])
        files["faq/added.md"] = Corpus.document(index: 102, markdown: true, bytes: 2_500, rng: &rng)
        try await bucket.put("docs/faq/added.md", files["faq/added.md"]!)
        let gets1 = try await bucket.stats().get
        let dry = try await ws.sluice(
            ["run", ws.file("s3.yaml").path, "--dry-run", "--prune", "--allow-mass-delete"] + main.arguments,
            environment: S3SourceCLITests.environment
        )
        #expect(dry.exitCode == 0, "\(dry)")
        let lines = Set(dry.stdout.split(separator: "\n").map(String.init))
        #expect(lines.contains("  add  faq/added.md"), "\(dry.stdout)")
        #expect(lines.contains("  change  \(keys[1])"), "\(dry.stdout)")
        #expect(lines.contains("  delete  \(keys[4])"), "\(dry.stdout)")
        #expect(try await bucket.stats().get == gets1, "a dry run downloads nothing")
        #expect(try await S3SourceCLITests.content(ws, main) == exported, "a dry run changes nothing")

        // 5. --shard 0/2 and 1/2 into fresh targets: each object is downloaded by one shard, and the shards'
        // documents together are a whole run's.
        let whole = try await Self.run(ws, bucket, main, "whole", ["--prune", "--allow-mass-delete"])
        #expect(whole.result.exitCode == 0, "\(whole.result)")
        let wholeKeys = try await Self.keys(ws, main)
        #expect(wholeKeys == Set(files.keys))
        var union = Set<String>()
        var shardGets = 0
        for shard in 0..<2 {
            let target = ws.target("shard-\(shard)")
            let run = try await Self.run(ws, bucket, target, "shard-\(shard)", ["--shard", "\(shard)/2"])
            #expect([0, 2].contains(run.result.exitCode), "\(run.result)")
            let shardKeys = try await Self.keys(ws, target)
            #expect(!shardKeys.isEmpty, "shard \(shard) holds documents")
            #expect(union.isDisjoint(with: shardKeys), "a document belongs to one shard")
            union.formUnion(shardKeys)
            shardGets += run.gets
        }
        #expect(union == wholeKeys)
        #expect(shardGets == files.count + 1, "each object (the empty one too) is downloaded by one shard")

        // 6. An object larger than extract.max_file_mb (by its listed size) fails with too-large, without a GET.
        try await bucket.put("docs/notes/big.md", String(repeating: "A paragraph well past the limit.\n", count: 400))
        let limited = try await Self.run(
            ws,
            bucket,
            ws.target("limited"),
            "limited",
            ["--set", "extract.max_file_mb=0.005"]  // 5,242 bytes: the documents are about 2,000 to 2,500
        )
        #expect(limited.result.exitCode == 2, "\(limited.result)")
        #expect(limited.stats?.decoded.failuresByCode["too-large"] == 1, "\(String(describing: limited.stats))")
        #expect(limited.gets == files.count + 1, "every object but the one too large (the empty one too)")
        try await bucket.delete("docs/notes/big.md")

        // 7. Every object gone: the listing comes back empty. --prune without --allow-mass-delete is refused
        // by the mass-delete guard (exit 7) and the index keeps everything.
        let before = try await S3SourceCLITests.content(ws, main)
        for key in files.keys { try await bucket.delete("docs/" + key) }
        try await bucket.delete("docs/notes/empty.txt")
        let refused = try await Self.run(ws, bucket, main, "refused", ["--prune"])
        #expect(refused.result.exitCode == 7, "\(refused.result)")
        #expect(refused.result.stderr.contains("max_delete_fraction"), "\(refused.result)")
        #expect(try await S3SourceCLITests.content(ws, main) == before, "an empty listing deleted nothing")
    }
}
