import Foundation
import SluiceTesting
import Testing

/// Index generations in a sharded deployment (docs/GENERATIONS.md, "Sharded deployments"): three shards, each
/// with its own state, one store — the local store (the manifest beside it), or a store behind a server
/// (real PostgreSQL+pgvector and Chroma, the Qdrant and Pinecone stand-ins: the manifest in the store itself;
/// for Pinecone, in a coordination store: a second real PostgreSQL, or an S3 bucket on moto).
/// Every shard builds its part of the candidate; promote is refused until every part is complete (a shard
/// killed during its build included), then switches once for all: every shard's state reads the new
/// generation, equal to a from-scratch build, and a rollback restores the old one. `generation status` shows
/// each shard's part from the shared manifest.
@Suite(.serialized)
struct GenerationShardsCLITests {
    static let count = 3

    /// Where the shards write: the local store, or one of the stores behind a server.
    enum Deployment: String, Sendable, CustomTestStringConvertible {
        case local, pgvector, chroma, qdrant, pinecone
        /// JSONL files (no sharded deployments: one state's generations only).
        case jsonl
        /// The Pinecone stand-in, the generation records in a real PostgreSQL (`generations.coordination`).
        case pineconeCoordinated = "pinecone-coordinated"
        /// The Pinecone stand-in, the generation records in an S3 bucket (moto, `s3_server.py`).
        case pineconeS3 = "pinecone-s3"
        var testDescription: String { rawValue }
        var store: StoreUnderTest.Kind? {
            coordination != nil ? .pinecone : StoreUnderTest.Kind(rawValue: rawValue)
        }
        /// Where the generation records are kept instead of the store.
        var coordination: StoreUnderTest.Coordination? {
            switch self {
            case .pineconeCoordinated: .postgres
            case .pineconeS3: .s3
            default: nil
            }
        }
    }

    /// The shards' targets (and the reference's) of one deployment: a state each, one store.
    struct Shards {
        let store: StoreUnderTest?
        let local: URL

        func shard(_ ws: Workspace, _ name: String) -> Workspace.Target {
            guard let store else { return Workspace.Target(state: ws.target(name).state, index: local) }
            return store.target(ws, name, sinkName: "shared")
        }

        func reference(_ ws: Workspace) -> Workspace.Target {
            store?.target(ws, "reference") ?? ws.target("reference")
        }

        var exactVectors: Bool { store?.kind.exactVectors ?? true }
    }

    /// `body` run with ``setUp(_:_:documents:seed:)``'s workspace and store, which are stopped and cleaned
    /// up after it, however it ends.
    static func withDeployment(
        _ name: String,
        _ deployment: Deployment,
        documents: Int,
        seed: UInt64,
        _ body: (Workspace, Shards) async throws -> Void
    ) async throws {
        let (ws, shards) = try await setUp(name, deployment, documents: documents, seed: seed)
        defer {
            shards.store?.stop()
            ws.cleanUp()
        }
        try await body(ws, shards)
    }

    /// A workspace with a corpus of `documents` documents, and the deployment's store started (the caller
    /// stops it and cleans the workspace up).
    static func setUp(
        _ name: String,
        _ deployment: Deployment,
        documents: Int,
        seed: UInt64
    ) async throws -> (Workspace, Shards) {
        let ws = try Workspace("\(name)-\(deployment.rawValue)")
        do {
            try Corpus.write(count: documents, into: ws.corpus, seed: seed)
            var store: StoreUnderTest?
            if let kind = deployment.store {
                store = try await StoreUnderTest.start(
                    kind,
                    in: ws,
                    coordination: deployment.coordination
                )
            }
            return (ws, Shards(store: store, local: ws.root.appendingPathComponent("shared-index")))
        } catch {
            ws.cleanUp()
            throw error
        }
    }

    /// `sluice run --shard K/3` of `target`.
    static func run(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ shard: Int,
        _ extra: [String] = [],
        environment: [String: String?] = [:]
    ) async throws -> CommandResult {
        try await ws.sluice(
            ws.runArguments(target, ["--shard", "\(shard)/\(count)"] + extra),
            environment: environment
        )
    }

    /// Every shard of `deployment` run once, a candidate started with shard 0's state, then the shards
    /// `building` run again (each builds its part): the shards' targets.
    static func startCandidate(
        _ ws: Workspace,
        _ deployment: Shards,
        building: [Int]
    ) async throws -> [Workspace.Target] {
        let shards = (0..<count).map { deployment.shard(ws, "shard\($0)") }
        for (index, shard) in shards.enumerated() {
            #expect(try await run(ws, shard, index).exitCode == 0)
        }
        let started = try await GenerationCLITests.generation(
            ws,
            "start",
            shards[0],
            GenerationCLITests.candidateSettings
        )
        #expect(started.exitCode == 0, "\(started)")
        for index in building { #expect(try await run(ws, shards[index], index).exitCode == 0) }
        return shards
    }

    /// Shard `index`'s run of `target` started and held at a document's read (`SLUICE_DEBUG_PAUSE_READ`) until
    /// the file `resume` exists: the running command.
    static func startHeldAtRead(
        _ ws: Workspace,
        _ target: Workspace.Target,
        _ index: Int,
        resume: URL
    ) async throws -> SluiceProcess {
        let running = try ws.start(
            ws.runArguments(target, ["--shard", "\(index)/\(count)"]),
            environment: ["SLUICE_DEBUG_PAUSE_READ": ws.corpus.lastPathComponent, "SLUICE_DEBUG_RESUME": resume.path]
        )
        let paused = await running.waitForStderr(containing: "sluice-debug: paused at READ", timeout: .seconds(600))
        try #require(paused, "never paused: \(running.stderrSoFar)")
        return running
    }

    /// A from-scratch build of the corpus with the candidate's settings, in the deployment's store: its export.
    static func rebuiltReference(_ ws: Workspace, _ deployment: Shards) async throws -> Data {
        let reference = deployment.reference(ws)
        try await ws.run(reference, GenerationCLITests.candidateSettings, expecting: 0)
        return try await ws.export(reference)
    }

    /// `generation status --json`'s `shards` object of `target`.
    static func shardsStatus(_ ws: Workspace, _ target: Workspace.Target) async throws -> [String: Any] {
        let status = try await GenerationCLITests.generation(ws, "status", target, ["--json"])
        try #require(status.exitCode == 0, "\(status)")
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        return try #require(object?["shards"] as? [String: Any], "\(status)")
    }

    /// Whether each shard's part is complete, as `generation status --json` shows it.
    static func partsComplete(_ shards: [String: Any]) -> [Bool] {
        ((shards["parts"] as? [[String: Any]]) ?? []).map { ($0["complete"] as? Bool) ?? false }
    }

    @Test(
        "each shard builds its part of the candidate; promote refused until every part is complete, a shard killed mid-build included; one switch for all shards",
        arguments: [Deployment.local, .pgvector, .chroma, .qdrant, .pineconeCoordinated, .pineconeS3]
    )
    func shardsBuildTheirPartsThenOneSwitch(_ deployment: Deployment) async throws {
        let (ws, deploymentShards) = try await Self.setUp(
            "generation-shards",
            deployment,
            documents: 12,
            seed: 0x6E_0050
        )
        defer {
            deploymentShards.store?.stop()
            ws.cleanUp()
        }
        let shards = (0..<Self.count).map { deploymentShards.shard(ws, "shard\($0)") }
        for (index, shard) in shards.enumerated() {
            let result = try await Self.run(ws, shard, index)
            #expect(result.exitCode == 0, "\(result)")
        }
        let before = try await ws.export(shards[0])

        // Started with shard 1's state: the deployment's one manifest is beside the store, or in it.
        let started = try await GenerationCLITests.generation(
            ws,
            "start",
            shards[1],
            GenerationCLITests.candidateSettings
        )
        #expect(started.exitCode == 0, "\(started)")
        if deployment == .local {
            #expect(
                FileManager.default.fileExists(
                    atPath: deploymentShards.local.appendingPathComponent("generations/shared/generations.json").path
                )
            )
        }
        for index in [0, 1] {
            let result = try await Self.run(ws, shards[index], index)
            #expect(result.exitCode == 0, "\(result)")
        }
        // Every shard's state shows every shard's part, from the one manifest.
        for shard in shards {
            let status = try await Self.shardsStatus(ws, shard)
            #expect(status["count"] as? Int == Self.count, "\(status)")
            #expect(Self.partsComplete(status) == [true, true, false], "\(status)")
        }
        let text = try await GenerationCLITests.generation(ws, "status", shards[2])
        #expect(text.stdout.contains("shard 2/3: not built yet"), "\(text)")
        #expect(text.stdout.contains("2 of 3 parts complete"), "\(text)")
        let missingOne = try await GenerationCLITests.generation(ws, "promote", shards[0])
        #expect(missingOne.exitCode == 8, "\(missingOne)")
        #expect(missingOne.stderr.contains("shard 2/3"), "\(missingOne)")

        // Shard 2 killed while it builds its part (its active generation has nothing to do: the first
        // writes are the candidate's).
        let killed = try await Self.run(
            ws,
            shards[2],
            2,
            ["--set", "sink.batch=4"],
            environment: ["SLUICE_DEBUG_CRASH_AT": "upsert.sink-written@2"]
        )
        CrashWindowCLITests.expectKilled(killed)
        let afterKill = try await GenerationCLITests.generation(ws, "promote", shards[1])
        #expect(afterKill.exitCode == 8, "\(afterKill)")
        #expect(afterKill.stderr.contains("shard 2/3"), "\(afterKill)")
        let killedText = try await GenerationCLITests.generation(ws, "status", shards[0])
        #expect(killedText.stdout.contains("shard 2/3: not complete"), "\(killedText)")
        for shard in shards {
            try expectSameRecords(
                try await ws.export(shard),
                before,
                exact: deploymentShards.exactVectors,
                "refused promotes changed nothing"
            )
        }

        // The same command resumes; then one promote switches every shard's state.
        let resumed = try await Self.run(ws, shards[2], 2)
        #expect(resumed.exitCode == 0, "\(resumed)")
        #expect(Self.partsComplete(try await Self.shardsStatus(ws, shards[0])) == [true, true, true])
        let promoted = try await GenerationCLITests.generation(ws, "promote", shards[2])
        #expect(promoted.exitCode == 0, "\(promoted)")
        let rebuilt = try await Self.rebuiltReference(ws, deploymentShards)
        #expect(rebuilt != before, "the two chunkings gave the same export: the test proves nothing")
        for (index, shard) in shards.enumerated() {
            try expectSameRecords(
                try await ws.export(shard),
                rebuilt,
                exact: deploymentShards.exactVectors,
                "shard \(index)'s state after the one switch"
            )
        }
        // Runs after the switch keep the new generation as it is.
        for (index, shard) in shards.enumerated() {
            let result = try await Self.run(ws, shard, index)
            #expect(result.exitCode == 0, "\(result)")
        }
        try expectSameRecords(
            try await ws.export(shards[0]),
            rebuilt,
            exact: deploymentShards.exactVectors,
            "after every shard ran again"
        )

        let rolledBack = try await GenerationCLITests.generation(ws, "rollback", shards[0])
        #expect(rolledBack.exitCode == 0, "\(rolledBack)")
        for (index, shard) in shards.enumerated() {
            try expectSameRecords(
                try await ws.export(shard),
                before,
                exact: deploymentShards.exactVectors,
                "shard \(index)'s state after the rollback"
            )
        }
        // The rolled-back generation is a candidate again: its parts are built again before a promote.
        #expect(Self.partsComplete(try await Self.shardsStatus(ws, shards[1])) == [false, false, false])
        let stale = try await GenerationCLITests.generation(ws, "promote", shards[0])
        #expect(stale.exitCode == 8, "\(stale)")
    }

    @Test(
        "a change waits for every shard's run (the deployment's lock: pgvector's advisory lock across machines): exit 3 while one runs, nothing changed",
        arguments: [Deployment.local, .pgvector]
    )
    func changeRefusedWhileAShardRuns(_ deployment: Deployment) async throws {
        let (ws, deploymentShards) = try await Self.setUp(
            "generation-shards-lock",
            deployment,
            documents: 9,
            seed: 0x6E_0052
        )
        defer {
            deploymentShards.store?.stop()
            ws.cleanUp()
        }
        let shards = try await Self.startCandidate(ws, deploymentShards, building: [0, 2])

        // Shard 1's run builds its part, held at a document's read: it holds the deployment's lock, shared.
        let resume = ws.root.appendingPathComponent("resume")
        let running = try await Self.startHeldAtRead(ws, shards[1], 1, resume: resume)
        let manifestBefore = try await GenerationCLITests.generation(ws, "status", shards[2], ["--json"])
        for change in ["promote", "drop"] {
            let refused = try await GenerationCLITests.generation(ws, change, shards[2])
            #expect(refused.exitCode == 3, "\(change) while shard 1 runs: \(refused)")
        }
        #expect(
            try await GenerationCLITests.generation(ws, "status", shards[2], ["--json"]).stdout
                == manifestBefore.stdout,
            "refused changes changed nothing"
        )
        _ = FileManager.default.createFile(atPath: resume.path, contents: Data())
        let ran = try await running.wait(timeout: .seconds(240))
        #expect(ran.exitCode == 0, "\(ran)")
        // Its lock went with its run: the change is made now.
        let promoted = try await GenerationCLITests.generation(ws, "promote", shards[2])
        #expect(promoted.exitCode == 0, "\(promoted)")
    }

    @Test(
        "a shard run with another shard count than the deployment's generations is refused (exit 1)",
        arguments: [Deployment.local, .pgvector, .chroma, .qdrant, .pineconeCoordinated]
    )
    func otherShardCountRefused(_ deployment: Deployment) async throws {
        let (ws, shards) = try await Self.setUp("generation-shards-count", deployment, documents: 4, seed: 0x6E_0051)
        defer {
            shards.store?.stop()
            ws.cleanUp()
        }
        let first = shards.shard(ws, "a")
        #expect(try await Self.run(ws, first, 0).exitCode == 0)
        #expect(
            try await GenerationCLITests.generation(ws, "start", first, GenerationCLITests.candidateSettings).exitCode
                == 0
        )
        let other = shards.shard(ws, "b")
        let refused = try await ws.sluice(ws.runArguments(other, ["--shard", "1/2"]))
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("3 shards"), "\(refused)")
    }

    @Test(
        "without a deployment lock (Chroma, Qdrant, Pinecone with a coordination store): a promote while a shard rebuilds its part is refused (exit 8); of two racing promotes the one that read the manifest first and wrote it last loses with exit 3, changing nothing",
        arguments: [Deployment.chroma, .qdrant, .pineconeCoordinated, .pineconeS3]
    )
    func changesRaceSafelyWithoutALock(_ deployment: Deployment) async throws {
        let (ws, deploymentShards) = try await Self.setUp(
            "generation-shards-race",
            deployment,
            documents: 9,
            seed: 0x6E_0053
        )
        defer {
            deploymentShards.store?.stop()
            ws.cleanUp()
        }
        let shards = try await Self.startCandidate(ws, deploymentShards, building: [0, 1, 2])
        #expect(Self.partsComplete(try await Self.shardsStatus(ws, shards[0])) == [true, true, true])

        // Shard 1 runs again, held at a document's read (every file's time moved: its documents are read
        // again): its part was marked incomplete when its run began, so a promote is refused (no lock to
        // wait for: the part says it).
        // (Put back once it ran: a file's time alone does not rewrite its records, and the reference below
        // is built from the files as they are.)
        var times: [String: Date] = [:]
        for name in try FileManager.default.subpathsOfDirectory(atPath: ws.corpus.path) {
            let path = ws.corpus.appendingPathComponent(name).path
            times[path] = try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(120)],
                ofItemAtPath: path
            )
        }
        let resumeRun = ws.root.appendingPathComponent("resume-run")
        let running = try await Self.startHeldAtRead(ws, shards[1], 1, resume: resumeRun)
        let statusBefore = try await GenerationCLITests.generation(ws, "status", shards[2], ["--json"])
        let whileRunning = try await GenerationCLITests.generation(ws, "promote", shards[2])
        #expect(whileRunning.exitCode == 8, "promote while shard 1 runs: \(whileRunning)")
        #expect(whileRunning.stderr.contains("shard 1/3"), "\(whileRunning)")
        #expect(
            try await GenerationCLITests.generation(ws, "status", shards[2], ["--json"]).stdout
                == statusBefore.stdout,
            "the refused promote changed nothing"
        )
        _ = FileManager.default.createFile(atPath: resumeRun.path, contents: Data())
        let ran = try await running.wait(timeout: .seconds(240))
        #expect(ran.exitCode == 0, "\(ran)")
        #expect(Self.partsComplete(try await Self.shardsStatus(ws, shards[0])) == [true, true, true])
        for (path, time) in times {
            try FileManager.default.setAttributes([.modificationDate: time], ofItemAtPath: path)
        }

        // Two promotes: the first (shard 0's state) is held after it read the store's manifest, before it
        // writes it; the second (shard 2's) promotes meanwhile. The first's conditional write then loses.
        let resumeChange = ws.root.appendingPathComponent("resume-change")
        let held = try ws.start(
            ["generation", "promote", ws.pipeline.path] + shards[0].arguments,
            environment: [
                "SLUICE_DEBUG_PAUSE_CHANGE": shards[0].state.lastPathComponent,
                "SLUICE_DEBUG_RESUME": resumeChange.path,
            ]
        )
        let heldAtChange = await held.waitForStderr(
            containing: "sluice-debug: paused at CHANGE",
            timeout: .seconds(120)
        )
        try #require(heldAtChange, "never paused: \(held.stderrSoFar)")
        let promoted = try await GenerationCLITests.generation(ws, "promote", shards[2])
        #expect(promoted.exitCode == 0, "\(promoted)")
        var afterWinner: [String] = []
        for shard in shards {
            afterWinner.append(try await GenerationCLITests.generation(ws, "status", shard, ["--json"]).stdout)
        }
        let winner = try JSONSerialization.jsonObject(with: Data(afterWinner[0].utf8)) as? [String: Any]
        #expect(winner?["previous"] is [String: Any] && winner?["candidate"] is NSNull, "promoted: \(afterWinner[0])")
        _ = FileManager.default.createFile(atPath: resumeChange.path, contents: Data())
        let lost = try await held.wait(timeout: .seconds(120))
        #expect(lost.exitCode == 3, "the promote that lost the race: \(lost)")
        #expect(lost.stderr.contains("changed while this command ran"), "\(lost)")
        for (index, shard) in shards.enumerated() {
            let status = try await GenerationCLITests.generation(ws, "status", shard, ["--json"])
            #expect(status.stdout == afterWinner[index], "the losing promote changed nothing: \(status)")
        }
        // Every shard's next run keeps the one generation promoted, equal to a from-scratch build with the
        // candidate's settings.
        for (index, shard) in shards.enumerated() {
            let result = try await Self.run(ws, shard, index)
            #expect(result.exitCode == 0, "\(result)")
        }
        let rebuilt = try await Self.rebuiltReference(ws, deploymentShards)
        for (index, shard) in shards.enumerated() {
            try expectSameRecords(
                try await ws.export(shard),
                rebuilt,
                exact: deploymentShards.exactVectors,
                "shard \(index)'s state after the one promote that won"
            )
        }
    }

    @Test(
        "`sluice check` reaches the coordination store: ok with the manifest's version, no secret printed; exit 6 with a coordination line when it cannot be reached"
    )
    func checkReachesTheCoordinationStore() async throws {
        let (ws, deployment) = try await Self.setUp(
            "generation-shards-check",
            .pineconeCoordinated,
            documents: 3,
            seed: 0x6E_0055
        )
        defer {
            deployment.store?.stop()
            ws.cleanUp()
        }
        let store = try #require(deployment.store)
        let shard = deployment.shard(ws, "a")
        #expect(try await Self.run(ws, shard, 0).exitCode == 0)
        let started = try await GenerationCLITests.generation(ws, "start", shard, GenerationCLITests.candidateSettings)
        #expect(started.exitCode == 0, "\(started)")
        let checked = try await ws.sluice(
            ["check", ws.pipeline.path] + shard.arguments + ["--source", ws.corpus.path, "--shard", "0/3"]
        )
        #expect(checked.exitCode == 0, "\(checked)")
        let line = checked.stdout.split(separator: "\n").first { $0.contains("coordination") }
        #expect(line?.contains("the deployment's manifest is at version 1") == true, "\(checked)")
        #expect(!checked.stdout.contains(StoreUnderTest.password) && !checked.stderr.contains(StoreUnderTest.password))

        // A coordination store nothing listens at (port 1 on loopback: the connection is refused).
        let fresh = store.target(ws, "fresh", sinkName: "shared")
        let down = try await ws.sluice(
            ["check", ws.pipeline.path] + fresh.arguments
                + [
                    "--source", ws.corpus.path, "--set",
                    "generations.coordination=postgresql://postgres@127.0.0.1:1/postgres",
                ]
        )
        #expect(down.exitCode == 6, "\(down)")
        let downLine = down.stdout.split(separator: "\n").first { $0.contains("coordination") }
        #expect(downLine?.hasPrefix("unavailable") == true, "\(down)")
    }

    @Test(
        "Pinecone keeps no deployment manifest: without a coordination store a sharded `generation start` exits 1, says why and names generations.coordination"
    )
    func shardedStartRefusedOnPinecone() async throws {
        let (ws, shards) = try await Self.setUp("generation-shards-pinecone", .pinecone, documents: 3, seed: 0x6E_0054)
        defer {
            shards.store?.stop()
            ws.cleanUp()
        }
        let first = shards.shard(ws, "a")
        #expect(try await Self.run(ws, first, 0).exitCode == 0)
        let refused = try await GenerationCLITests.generation(ws, "start", first, GenerationCLITests.candidateSettings)
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("no conditional write"), "\(refused)")
        #expect(refused.stderr.contains("eventually consistent"), "\(refused)")
        #expect(refused.stderr.contains("its LSNs tell a writer"), "\(refused)")
        #expect(refused.stderr.contains("generations.coordination"), "\(refused)")
    }
}
