import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The campaign against HTTP stores (the Qdrant and Pinecone stand-ins' `--fault-every N`: every Nth write
/// fails with a 503 or a 429 before it is applied, or a 500 after): a full run, an incremental `--prune`
/// run and a kill -9 with its resume must each end equal to the local store's fault-free run.
extension FaultCampaignTests {
    struct StoreCase: Sendable, CustomTestStringConvertible {
        var kind: StoreUnderTest.Kind
        var faultEvery: Int
        var testDescription: String { "\(kind.rawValue), every \(faultEvery) writes" }
    }

    static let allStoreCases: [StoreCase] = [StoreUnderTest.Kind.qdrant, .pinecone].flatMap { kind in
        [2, 3, 5].map { StoreCase(kind: kind, faultEvery: $0) }
    }

    @Test("an HTTP store that fails every few writes: full, incremental and killed runs lose nothing")
    func storeFaults() async throws {
        try await Self.store(StoreCase(kind: .qdrant, faultEvery: 3))
    }

    @Test(
        "the sweep: Qdrant and Pinecone failing every 2, 3 and 5 writes",
        .enabled(if: FaultCampaign.sweep),
        arguments: allStoreCases.filter { !($0.kind == .qdrant && $0.faultEvery == 3) }
    )
    func storeSweep(_ store: StoreCase) async throws {
        try await Self.store(store)
    }

    static func store(_ store: StoreCase) async throws {
        let ws = try Workspace("faults-store-\(store.kind.rawValue)")
        defer { ws.cleanUp() }
        let server = try await StoreUnderTest.start(store.kind, in: ws, faultEvery: store.faultEvery)
        defer { server.stop() }
        var keys = try Corpus.write(count: 16, into: ws.corpus, seed: 0x5EED_1420, maxBytes: 5_000)
        let local = ws.target("local")
        try await ws.run(local, expecting: 0)

        try await FaultCampaign.scenario(.fault, "store \(store.testDescription): full run") { scenario in
            let main = server.target(ws, "main")
            let result = try await ws.run(main)
            scenario.expect(result.exitCode == 0, "\(result)")
            scenario.expectSameExport(
                try await ws.export(main),
                try await ws.export(local),
                "a full run vs. the local store"
            )
        }

        var rng = SeededGenerator(seed: 0x5EED_1421)
        try Corpus.write(
            Corpus.document(index: 9_200, markdown: false, bytes: 3_000, rng: &rng),
            to: ws.corpus.appendingPathComponent(keys[1])
        )
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(keys[2]))
        try Corpus.write(
            Corpus.document(index: 9_201, markdown: false, bytes: 3_000, rng: &rng),
            to: ws.corpus.appendingPathComponent("added/new.txt")
        )
        keys = keys.filter { $0 != keys[2] } + ["added/new.txt"]
        try await ws.run(local, ["--prune", "--allow-mass-delete"], expecting: 0)
        let expected = try await ws.export(local)

        try await FaultCampaign.scenario(.fault, "store \(store.testDescription): incremental --prune run") {
            scenario in
            let main = server.target(ws, "main")
            let result = try await ws.run(main, ["--prune", "--allow-mass-delete"])
            scenario.expect(result.exitCode == 0, "\(result)")
            scenario.expectSameExport(try await ws.export(main), expected, "an incremental run vs. the local store")
            let verify = try await ws.sluice(["verify", ws.pipeline.path] + main.arguments)
            scenario.expect(verify.exitCode == 0, "verify: \(verify)")
        }

        try await FaultCampaign.scenario(.fault, "store \(store.testDescription): kill -9 of a slow run, then resume") {
            scenario in
            let crashed = server.target(ws, "crashed")
            let process = try ws.start(ws.runArguments(crashed, slowRunSettings))
            let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
            scenario.expect(started || !process.isRunning, "no 'run started': \(process.stderrSoFar)")
            // Kill once a third of the documents are committed (the progress is in the state), or at the end.
            while process.isRunning {
                let status = try? await ws.sluice(["status", ws.pipeline.path] + crashed.arguments)
                if let text = status?.stdout, (StatusReport(text: text).documents["indexed"] ?? 0) >= keys.count / 3 {
                    break
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            process.send(SIGKILL)
            let result = try await process.wait(timeout: .seconds(300))
            scenario.notes.append(result.signaled ? "killed" : "ended before the kill")
            let resumed = try await ws.run(crashed, timeout: .seconds(300))
            scenario.expect(resumed.exitCode == 0, "\(resumed)")
            scenario.expectSameExport(try await ws.export(crashed), expected, "resumed vs. the local store")
            try await Lab.expectEveryDocumentAccounted(ws, crashed, keys: keys, scenario)
        }
    }
}
