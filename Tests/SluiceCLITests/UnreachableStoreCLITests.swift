import Foundation
import SluiceTesting
import Testing

/// `search`, `sink info` and `ask` against a store that cannot be reached exit 6 with a message that says
/// so, as `run` does and as `serve` answers 503 (docs/DESIGN.md §7): nothing listens on port 1, so each
/// connection is refused at once; nothing here waits on a clock.
@Suite struct UnreachableStoreCLITests {
    /// The settings of a store of each kind at an address that refuses connections.
    static let deadStores: [(String, [String])] = [
        ("qdrant", ["sink.kind=qdrant", "sink.url=http://127.0.0.1:1", "sink.collection=c"]),
        ("chroma", ["sink.kind=chroma", "sink.url=http://127.0.0.1:1", "sink.collection=docs"]),
        ("pgvector", ["sink.kind=pgvector", "sink.url=postgresql://postgres@127.0.0.1:1/postgres", "sink.table=t"]),
    ]

    static let commands: [(String, [String])] = [
        ("search", ["search", "when does the valve open"]),
        ("sink info", ["sink", "info"]),
        (
            "ask",
            [
                "ask", "when does the valve open", "--set", "answer.base_url=http://127.0.0.1:1/v1",
                "--set", "answer.model=m", "--set", "answer.max_retries=0",
            ]
        ),
    ]

    @Test("search, sink info and ask exit 6 when the store refuses connections", arguments: deadStores)
    func commandsExitSix(store: (String, [String])) async throws {
        let ws = try Workspace("dead-store-\(store.0)")
        defer { ws.cleanUp() }
        var target = ws.target("main")
        target.sink = (store.1 + ["sink.max_retries=0"]).flatMap { ["--set", $0] }
        for (name, arguments) in Self.commands {
            let result = try await ws.sluice(
                Array(arguments.prefix(2)) + [ws.pipeline.path] + target.arguments
                    + Array(arguments.dropFirst(2))
            )
            #expect(result.exitCode == 6, "\(name) against a dead \(store.0): \(result)")
            let stderr = result.stderr.lowercased()
            #expect(
                stderr.contains("cannot be reached") || stderr.contains("refused") || stderr.contains("connect"),
                "\(name) against a dead \(store.0) does not say why: \(result.stderr)"
            )
        }
    }
}
