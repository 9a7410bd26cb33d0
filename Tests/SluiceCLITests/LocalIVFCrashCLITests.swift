import Foundation
import SluiceCore
import Testing

/// kill -9 while the local store's IVF index is trained on the trainer's thread, the run's writes going on
/// (`SLUICE_DEBUG_CRASH_AT`, see `CrashPoint`): between two commits of the relabelling (the store was written
/// with `exact`), after the labels are given, after k-means (the epoch not yet
/// recorded), after the epoch is recorded, with a part of the lists computed from a snapshot but not written,
/// between two of the commits that fill its lists. The LMDB data is the truth and the lists are written in
/// its transactions: whatever the kill left, `sluice search` with `ivf` must answer as the exact scan does, at
/// once and after the next run, which finishes the training with every record in exactly one list entry.
@Suite("kill -9 while the IVF index is trained")
struct LocalIVFCrashCLITests {
    /// Trained at 8 vectors, filled 16 entries a commit (`local_commit_pages` 1): these stores need several.
    static let ivf = [
        "--set", "sink.local_index=ivf", "--set", "sink.ivf.exact_below=8", "--set", "sink.local_commit_pages=1",
    ]

    /// The IVF index's facts, from `sluice sink info --json`, and `count`: the records in the store.
    static func details(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String: String] {
        let result = try await ws.sluice(["sink", "info", "--json", ws.pipeline.path] + target.arguments + Self.ivf)
        #expect(result.exitCode == 0, "\(result)")
        let info = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        var details = info?["details"] as? [String: String] ?? [:]
        details["count"] = (info?["count"] as? Int).map(String.init)
        return details
    }

    @Test(
        "kill -9 during training: searches stay exact, and the next run finishes the training",
        arguments: [
            "local.ivf-relabel-part", "local.ivf-relabelled", "local.ivf-trained", "local.ivf-training-begun",
            "local.ivf-part-computed",
            "local.ivf-training-part",
        ]
    )
    func killWhileTraining(point: String) async throws {
        let ws = try Workspace("crash-local-ivf")
        defer { ws.cleanUp() }
        _ = try Corpus.write(count: 24, into: ws.corpus, seed: 0x1F7)
        let main = ws.target("main")
        // Written with `exact`: the next run with `ivf` labels every record, then trains, before it writes.
        try await ws.run(main, ["--set", "sink.local_index=exact"], expecting: 0)
        _ = try Corpus.write(count: 4, into: ws.corpus, seed: 0x2F7, prefix: "new")
        let crashed = try await ws.sluice(
            ws.runArguments(main, Self.ivf),
            environment: ["SLUICE_DEBUG_CRASH_AT": point]
        )
        CrashWindowCLITests.expectKilled(crashed)
        let during = try await Self.details(ws, main)
        #expect(during["ivf_epoch"] == "none (searches scan)", "never current before it is whole: \(during)")
        try await LocalIndexCrashCLITests.expectSearchIsExact(ws, main, "after the kill at \(point)", index: Self.ivf)

        try await ws.run(main, Self.ivf, expecting: 0)
        let after = try await Self.details(ws, main)
        #expect(after["ivf_training"] == nil && after["ivf_lists"] != nil, "\(after)")
        #expect(after["ivf_entries"] != nil && after["ivf_entries"] == after["count"], "one entry a record: \(after)")
        try await LocalIndexCrashCLITests.expectSearchIsExact(ws, main, "after the next run", index: Self.ivf)
    }
}
