import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// Fetching across hosts at once, each host politely: a list of pages on two hosts (`127.0.0.1` and
/// `localhost`, one loopback server) with a politeness delay is not serialized — the second host's pages
/// are asked while the first host waits for its delay — and one host's requests arrive about the delay apart.
/// The pacer starts them at least the delay apart (`HostScheduleTests` pins that exactly, on a test clock); the
/// server sees each start plus that request's latency, which differs between two requests (a new connection, a
/// busy machine: 51 ms short of a second was seen), so the check here is half the delay: unpaced requests
/// arrive milliseconds apart.
@Suite(.serialized)
struct WebSourceConcurrencyCLITests {
    @Test("two hosts asked at once, each no faster than its delay")
    func hostsInParallelEachPolitely() async throws {
        let ws = try Workspace("web-concurrency")
        defer { ws.cleanUp() }
        let site = WebSourceCLITests.Site(server: try await StandInServer.launch(script: "web_server.py"))
        defer { site.server.stop() }
        let port = site.server.port
        var urls: [String] = []
        for page in 1...3 {
            try await site.put("/one-\(page).txt", "Page \(page) of host one, about gates.\n", type: "text/plain")
            try await site.put("/two-\(page).txt", "Page \(page) of host two, about locks.\n", type: "text/plain")
            urls.append("\"http://127.0.0.1:\(port)/one-\(page).txt\"")
        }
        for page in 1...3 { urls.append("\"http://localhost:\(port)/two-\(page).txt\"") }
        let delay = 1.0
        let yaml = Workspace.pipelineYAML.replacingOccurrences(
            of: """
                source:
                  path: ./corpus
                  include: ["**/*.txt", "**/*.md"]

                """,
            with: """
                source:
                  kind: http
                  http:
                    urls: [\(urls.joined(separator: ", "))]
                    delay_seconds: \(delay)
                    concurrency: 4
                  include: ["**"]

                """
        )
        try yaml.write(to: ws.file("http.yaml"), atomically: true, encoding: .utf8)
        let result = try await WebSourceCLITests.run(ws, ws.target("main"))
        #expect(result.exitCode == 0, "\(result)")

        let requests = try await site.requests()
        #expect(requests.count == 6, "\(requests)")
        let byHost = Dictionary(grouping: requests, by: { $0.host.split(separator: ":").first.map(String.init) ?? "" })
        #expect(Set(byHost.keys) == ["127.0.0.1", "localhost"], "\(byHost.keys)")
        for (host, asked) in byHost {
            for (earlier, later) in zip(asked, asked.dropFirst()) {
                #expect(later.time - earlier.time >= delay * 0.5, "\(host): \(earlier.path) then \(later.path)")
            }
        }
        // Serialized in list order, host two's first page would come after host one's last (two delays
        // later); fetched across hosts, it comes before.
        let firstOfTwo = requests.firstIndex { $0.path == "/two-1.txt" } ?? Int.max
        let lastOfOne = requests.firstIndex { $0.path == "/one-3.txt" } ?? -1
        #expect(firstOfTwo < lastOfOne, "\(requests.map(\.path))")
    }
}
