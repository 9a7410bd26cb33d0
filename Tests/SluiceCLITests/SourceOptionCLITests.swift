import Foundation
import Testing

/// `--source` names a folder: with a remote source (`source.kind: s3` or `http`) it was silently ignored,
/// so a user who meant another bucket or site got the pipeline file's. It is refused, with the setting to
/// change instead, before anything is contacted.
@Suite(.serialized)
struct SourceOptionCLITests {
    @Test("--source with a remote source.kind is refused (exit 1), naming the kind and what to set instead")
    func sourceOptionWithARemoteKindIsRefused() async throws {
        let ws = try Workspace("source-option-remote")
        defer { ws.cleanUp() }
        let pipelines = [
            "s3": """
            source:
              kind: s3
              s3:
                bucket: corpus
                endpoint: http://127.0.0.1:1
                region: us-east-1
            embed:
              provider: hash
              dimensions: 16
            """,
            "http": """
            source:
              kind: http
              http:
                urls: ["http://127.0.0.1:1/a.html"]
            embed:
              provider: hash
              dimensions: 16
            """,
        ]
        for (kind, yaml) in pipelines.sorted(by: { $0.key < $1.key }) {
            let file = ws.root.appendingPathComponent("\(kind).yaml")
            try Data(yaml.utf8).write(to: file)
            for command in ["run", "check"] {
                let result = try await ws.sluice(
                    [command, file.path, "--source", ws.corpus.path] + ws.target("main").arguments
                )
                #expect(result.exitCode == 1, "\(kind) \(command): \(result)")
                #expect(result.stderr.contains("--source"), "\(kind) \(command): \(result)")
                #expect(result.stderr.contains("source.kind is \(kind)"), "\(kind) \(command): \(result)")
            }
        }
    }
}
