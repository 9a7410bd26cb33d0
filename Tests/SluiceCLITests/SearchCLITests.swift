import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `sluice search` end to end (docs/USAGE.md, "Search"): JSON results with the shared field names, copies
/// collapsed, bad arguments and another embedder's index refused with exit 1.
@Suite struct SearchCLITests {
    @Test("search: JSON fields, collapsed copies, -k 0 / empty query / another embedder refused with exit 1")
    func searchEndToEnd() async throws {
        let ws = try Workspace("search-cli")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EA7_C401)
        // Three copies of one text under other keys.
        let original = ws.corpus.appendingPathComponent(keys[0])
        for copy in ["copies/a.md", "copies/b.md"] {
            let url = ws.corpus.appendingPathComponent(copy)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: original, to: url)
        }
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let text = try String(contentsOf: original, encoding: .utf8)
        let query = String(text.split(separator: "\n").first { $0.count > 40 } ?? Substring(text.prefix(80)))

        let result = try await ws.sluice(["search", query, "--json", "-k", "3", ws.pipeline.path] + main.arguments)
        #expect(result.exitCode == 0, "\(result)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.count == 3)
        let top = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        for field in [
            "id", "score", "document_key", "ordinal", "text", "snippet", "metadata", "headings", "duplicates",
        ] {
            #expect(top[field] != nil, "missing \(field): \(top)")
        }
        let duplicates = try #require(top["duplicates"] as? [[String: Any]])
        let holders = Set([top["document_key"] as? String] + duplicates.map { $0["document_key"] as? String })
        #expect(holders == [keys[0], "copies/a.md", "copies/b.md"], "\(top)")

        for (arguments, message) in [
            (["search", query, "-k", "0"], "k must be"), (["search", "   "], "empty"),
            (["search", query, "--filter", "page >="], "filter"), (["search", query, "--mode", "nonsense"], "mode"),
            (["search", query, "--set", "embed.dimensions=96"], "embedder"),
        ] {
            let refused = try await ws.sluice(arguments + [ws.pipeline.path] + main.arguments)
            #expect(refused.exitCode == 1, "\(arguments): \(refused)")
            #expect(refused.stderr.lowercased().contains(message), "\(arguments): \(refused.stderr)")
        }
    }
}
