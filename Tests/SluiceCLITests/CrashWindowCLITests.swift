import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// kill -9 at the exact point between a store write and the checkpoint write that goes with it
/// (`SLUICE_DEBUG_CRASH_AT`, see `CrashPoint`), then carry on as a user would: the end state must equal an
/// uninterrupted run's (docs/DESIGN.md §4), whatever the timing of the machine.
@Suite("Crash windows between the store and the checkpoint")
struct CrashWindowCLITests {
    /// A JSONL store: it journals and fsyncs every delete before acknowledging it, so what the process
    /// did before the kill is in the store afterwards.
    static func jsonlTarget(_ ws: Workspace, _ name: String) -> Workspace.Target {
        let local = ws.target(name)
        let path = ws.root.appendingPathComponent("stores").appendingPathComponent("\(name).jsonl").path
        return Workspace.Target(
            state: local.state,
            index: local.index,
            sink: ["--set", "sink.kind=jsonl", "--set", "sink.path=\(path)"]
        )
    }

    /// The corpus's files with their bytes and modification times, to put back as a backup would.
    struct Snapshot {
        var files: [(url: URL, bytes: Data, modified: Date)] = []

        init(_ corpus: URL, keys: [String]) throws {
            for key in keys {
                let url = corpus.appendingPathComponent(key)
                let modified =
                    try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date ?? Date()
                files.append((url, try Data(contentsOf: url), modified))
            }
        }

        func restore() throws {
            for file in files {
                try FileManager.default.createDirectory(
                    at: file.url.deletingLastPathComponent(),
                    withIntermediateDirectories: true
                )
                try file.bytes.write(to: file.url)
                try FileManager.default.setAttributes([.modificationDate: file.modified], ofItemAtPath: file.url.path)
            }
        }
    }

    static func expectKilled(_ result: CommandResult, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(
            result.signaled && result.status == SIGKILL,
            "expected the crash point to kill the process: \(result)",
            sourceLocation: sourceLocation
        )
    }

    static func verify(
        _ ws: Workspace,
        _ target: Workspace.Target,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let result = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
        #expect(result.exitCode == 0, "verify: \(result)", sourceLocation: sourceLocation)
    }

    @Test(
        "kill -9 after the old vectors of changed-and-failed documents are deleted; files restored: the next run re-indexes them"
    )
    func killAfterStaleDeletionOfFailedChanges() async throws {
        let ws = try Workspace("crash-failed-change")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0214)
        let main = Self.jsonlTarget(ws, "main")
        try await ws.run(main, expecting: 0)
        let baseline = try await ws.export(main)
        let snapshot = try Snapshot(ws.corpus, keys: keys)

        // Every file changes and fails (empty): the upsert stage deletes their old vectors, then is killed.
        for key in keys { try Data().write(to: ws.corpus.appendingPathComponent(key)) }
        let crashed = try await ws.sluice(
            ws.runArguments(main, ["--allow-mass-delete"]),
            environment: ["SLUICE_DEBUG_CRASH_AT": "upsert.stale-vectors-deleted"]
        )
        Self.expectKilled(crashed)

        try snapshot.restore()
        try await ws.run(main, expecting: 0)
        expectSameExport(try await ws.export(main), baseline, "after the crash and the restore")
        try await Self.verify(ws, main)
    }

    @Test(
        "kill -9 after --prune deleted the vectors of vanished documents; files restored: the next run re-indexes them"
    )
    func killAfterPruneDeletion() async throws {
        let ws = try Workspace("crash-prune")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0215)
        let main = Self.jsonlTarget(ws, "main")
        try await ws.run(main, expecting: 0)
        let baseline = try await ws.export(main)
        let snapshot = try Snapshot(ws.corpus, keys: keys)

        for key in keys.prefix(10) { try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(key)) }
        let crashed = try await ws.sluice(
            ws.runArguments(main, ["--prune", "--allow-mass-delete"]),
            environment: ["SLUICE_DEBUG_CRASH_AT": "prune.vectors-deleted"]
        )
        Self.expectKilled(crashed)

        try snapshot.restore()
        try await ws.run(main, expecting: 0)
        expectSameExport(try await ws.export(main), baseline, "after the crash and the restore")
        try await Self.verify(ws, main)
    }

    @Test(
        "kill -9 between clearing the store and forgetting the checkpoint (sink drop, run --reembed): the next run loads everything",
        arguments: ["sink-drop", "reembed"]
    )
    func killBetweenStoreClearAndCheckpointReset(_ command: String) async throws {
        let ws = try Workspace("crash-\(command)")
        defer { ws.cleanUp() }
        try Corpus.write(count: 24, into: ws.corpus, seed: 0x5EED_0216)
        let main = Self.jsonlTarget(ws, "main")
        try await ws.run(main, expecting: 0)
        let baseline = try await ws.export(main)

        let arguments =
            command == "sink-drop"
            ? ["sink", "drop", ws.pipeline.path] + main.arguments + ["--yes"]
            : ws.runArguments(main, ["--reembed"])
        let crashed = try await ws.sluice(arguments, environment: ["SLUICE_DEBUG_CRASH_AT": "\(command).midway"])
        Self.expectKilled(crashed)

        try await ws.run(main, expecting: 0)
        expectSameExport(try await ws.export(main), baseline, "after the crash, a plain run")
        try await Self.verify(ws, main)
    }
}
