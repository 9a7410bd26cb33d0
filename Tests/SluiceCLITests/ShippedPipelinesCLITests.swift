import Foundation
import SluiceTesting
import Testing

/// The shipped pipelines that need no server run as they are (issue 30): the local MiniLM model into the
/// local store and into JSONL files, on a few of the samples, with only the state and the output moved into
/// the test's folder. The others need a server or a key; `ShippedPipelinesTests` checks they read.
@Suite struct ShippedPipelinesCLITests {
    @Test("Pipelines/default.yaml and Pipelines/jsonl.yaml run as they are", arguments: ["default.yaml", "jsonl.yaml"])
    func aPipelineThatNeedsNoServerRuns(_ name: String) async throws {
        let ws = try Workspace("shipped-\(name)")
        defer { ws.cleanUp() }
        for sample in ["markdown/git-README.md", "csv/packages.csv", "json/nodejs-path.json"] {
            let target = ws.corpus.appendingPathComponent(sample)
            try FileManager.default.createDirectory(
                at: target.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(
                at: Corpus.repositoryRoot.appendingPathComponent("samples").appendingPathComponent(sample),
                to: target
            )
        }
        let pipeline = Corpus.repositoryRoot.appendingPathComponent("Pipelines").appendingPathComponent(name).path
        let output = name == "jsonl.yaml" ? ws.file("vectors.jsonl") : ws.file("index")
        let arguments = [
            pipeline, "--source", ws.corpus.path, "--state", ws.file("state").path, "--set", "sink.path=\(output.path)",
        ]
        let run = try await ws.sluice(["run"] + arguments, timeout: .seconds(240))
        #expect(run.exitCode == 0, "\(run)")
        #expect(run.stderr.contains("minilm"), "\(run)")
        let search = try await ws.sluice(
            ["search", "package summary"] + arguments.filter { $0 != "--source" && $0 != ws.corpus.path }
        )
        #expect(search.exitCode == 0, "\(search)")
        #expect(!search.stdout.contains("no results"), "\(search)")
    }
}
