import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// `--shard K/N` on a web source that names its pages in a list (issue 34; the crawl's shards are in
/// `WebSourceCrawlCLITests`): each page belongs to one shard, is fetched by that shard alone, and the shards'
/// indexes together hold what one unsharded run holds.
@Suite(.serialized)
struct WebSourceShardCLITests {
    typealias Site = WebSourceCLITests.Site

    @Test("--shard 0/2 and 1/2 over a URL list: disjoint, each page fetched by one shard, together the whole")
    func urlListShards() async throws {
        let ws = try Workspace("web-url-shards")
        defer { ws.cleanUp() }
        let site = Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let paths = (0..<8).map { "/pages/page-\($0).html" }
        for (index, path) in paths.enumerated() {
            try await site.put(
                path,
                "<html><head><title>Page \(index)</title></head><body><p>Page \(index) is about sluice gate \(index).</p></body></html>"
            )
        }
        try WebSourceCLITests.pipeline(urls: paths.map { site.server.baseURL + $0 })
            .write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)

        let whole = ws.target("whole")
        #expect(try await WebSourceCLITests.run(ws, whole).exitCode == 0)
        let all = WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, whole))
        #expect(all.count == paths.count)

        var union: Set<String> = []
        var fetchedByShards: [String] = []
        for shard in 0..<2 {
            let before = try await site.stats().paths.count
            let target = ws.target("shard-\(shard)")
            let result = try await WebSourceCLITests.run(ws, target, ["--shard", "\(shard)/2"])
            #expect(result.exitCode == 0, "\(result)")
            let keys = WebSourceCLITests.keys(try await WebSourceCLITests.content(ws, target))
            #expect(!keys.isEmpty && keys.count < paths.count, "shard \(shard) holds a part: \(keys)")
            #expect(union.isDisjoint(with: keys), "a page belongs to one shard")
            union.formUnion(keys)
            fetchedByShards += try await site.stats().paths.dropFirst(before)
        }
        #expect(union == all)
        #expect(fetchedByShards.sorted() == paths.sorted(), "each page fetched once, by its own shard")
    }
}
