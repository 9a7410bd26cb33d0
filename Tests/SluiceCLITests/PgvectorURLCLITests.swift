import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sink.url` of the pgvector sink against a real PostgreSQL: a password smuggled into it (percent-encoded
/// key in a URI query, or a key/value conninfo with spaces around `=`) is refused before any connection,
/// and appears in no output of `run`, `sink info` or `verify`.
@Suite(.serialized)
struct PgvectorURLCLITests {
    @Test(
        "a password hidden in sink.url (pass%77ord=, password = …) is refused by run, sink info and verify, and never printed"
    )
    func passwordInURLIsRefusedAndNeverPrinted() async throws {
        let ws = try Workspace("pg-url")
        defer { ws.cleanUp() }
        let store = try await StoreUnderTest.start(.pgvector, in: ws)
        defer { store.stop() }
        _ = try Corpus.write(count: 3, into: ws.corpus, seed: 0x7_0001)
        let port = try #require(store.server?.port)
        let password = StoreUnderTest.password
        let urls = [
            "postgresql://postgres@127.0.0.1:\(port)/postgres?pass%77ord=\(password)",
            "host=127.0.0.1 port=\(port) user=postgres dbname=postgres password = \(password)",
        ]
        for (index, url) in urls.enumerated() {
            let local = ws.target("url-\(index)")
            let target = Workspace.Target(
                state: local.state,
                index: local.index,
                sink: ["--set", "sink.kind=pgvector", "--set", "sink.url=\(url)", "--set", "sink.table=t_url_\(index)"]
            )
            let run = try await ws.sluice(ws.runArguments(target))
            let info = try await ws.sluice(["sink", "info", ws.pipeline.path] + target.arguments)
            let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
            for result in [run, info, verify] {
                #expect(result.exitCode == 1, "\(result)")
                #expect(result.stderr.contains("sink.url must not contain a password"), "\(result)")
                #expect(
                    !result.stdout.contains(password) && !result.stderr.contains(password),
                    "the password was printed: \(result)"
                )
            }
        }
    }
}
