import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The campaign against `sluice serve` (issue 37): what a web page can make a browser send to a token-less
/// loopback server (a DNS-rebound `Host`, cross-site `Origin`s, the bodies that need no preflight), and
/// connections that never finish (idle ones past the descriptor limit, heads and bodies that stop half way
/// or trickle, a stalled body at SIGTERM). Each browser request is a bad input that must be refused before
/// any route runs (no document text out, no run started); each connection case a fault the server must
/// survive (still answering `/health`, still stopping on SIGTERM).
extension FaultCampaignTests {
    struct BrowserCase: Sendable, CustomTestStringConvertible {
        var name: String
        var method: String
        var path: String
        /// `{port}` is replaced by the server's; nil: the server's own `127.0.0.1:{port}`.
        var host: String?
        var headers: [(String, String)] = []
        var body: String?
        var statuses: Set<Int>
        var testDescription: String { name }
    }

    static let searchBody = #"{"query": "river"}"#

    /// DNS rebinding: the page's own name resolved to 127.0.0.1, so `Host` carries it.
    static let reboundHosts = [
        "evil.example", "evil.example:{port}", "127.0.0.1.nip.io:{port}", "127.evil:{port}",
        "localhost.evil.example:{port}", "[::1].evil.example:{port}", "127.0.0.1:{other}",
    ]

    static let browserCases: [BrowserCase] = {
        var cases: [BrowserCase] = []
        for host in reboundHosts {
            cases += [
                BrowserCase(
                    name: "rebound \(host): list",
                    method: "GET",
                    path: "/v1/documents",
                    host: host,
                    statuses: [421]
                ),
                BrowserCase(
                    name: "rebound \(host): a document",
                    method: "GET",
                    path: "/v1/documents/plain.txt",
                    host: host,
                    statuses: [421]
                ),
                BrowserCase(
                    name: "rebound \(host): search",
                    method: "POST",
                    path: "/v1/search",
                    host: host,
                    headers: [("Content-Type", "application/json")],
                    body: searchBody,
                    statuses: [421]
                ),
                BrowserCase(
                    name: "rebound \(host): a run",
                    method: "POST",
                    path: "/v1/runs",
                    host: host,
                    statuses: [421]
                ),
                BrowserCase(name: "rebound \(host): ready", method: "GET", path: "/ready", host: host, statuses: [421]),
            ]
        }
        let evil = ("Origin", "https://evil.example")
        for type in [
            "text/plain", "text/plain; charset=utf-8", "application/x-www-form-urlencoded",
            "multipart/form-data; boundary=x",
        ] {
            for path in ["/v1/search", "/v1/runs", "/v1/ask"] {
                cases.append(
                    BrowserCase(
                        name: "cross-site \(type) POST \(path)",
                        method: "POST",
                        path: path,
                        headers: [evil, ("Content-Type", type)],
                        body: searchBody,
                        statuses: [403, 415]
                    )
                )
                cases.append(
                    BrowserCase(
                        name: "no Origin, \(type) POST \(path)",
                        method: "POST",
                        path: path,
                        headers: [("Content-Type", type)],
                        body: searchBody,
                        statuses: [415]
                    )
                )
            }
        }
        for origin in ["https://evil.example", "null", "http://localhost:{other}", "http://127.0.0.1:{other}"] {
            cases.append(
                BrowserCase(
                    name: "Origin \(origin): body-less POST /v1/runs",
                    method: "POST",
                    path: "/v1/runs",
                    headers: [("Origin", origin)],
                    statuses: [403]
                )
            )
            cases.append(
                BrowserCase(
                    name: "Origin \(origin): JSON search",
                    method: "POST",
                    path: "/v1/search",
                    headers: [("Origin", origin), ("Content-Type", "application/json")],
                    body: searchBody,
                    statuses: [403]
                )
            )
        }
        cases += [
            BrowserCase(
                name: "a form's GET-less method override",
                method: "PUT",
                path: "/v1/runs",
                headers: [("Content-Type", "application/json")],
                body: "{}",
                statuses: [405]
            ),
            BrowserCase(name: "DELETE a document", method: "DELETE", path: "/v1/documents/plain.txt", statuses: [405]),
            BrowserCase(
                name: "preflight from a foreign origin",
                method: "OPTIONS",
                path: "/v1/search",
                headers: [evil, ("Access-Control-Request-Method", "POST")],
                statuses: [403, 404, 405]
            ),
            BrowserCase(
                name: "an untyped body",
                method: "POST",
                path: "/v1/search",
                body: searchBody,
                statuses: [415]
            ),
        ]
        return cases
    }()

    @Test("the browser-origin request set against a token-less loopback server")
    func browserOrigin() async throws {
        let ws = try Workspace("faults-serve-browser")
        defer { ws.cleanUp() }
        let server = try await ServeCLITests.served(ws)
        // Without the sweep: one case of each kind.
        let cases =
            FaultCampaign.sweep
            ? Self.browserCases
            : Self.browserCases.filter {
                ["rebound evil.example: list", "cross-site text/plain POST /v1/runs"].contains($0.name)
                    || $0.name.hasPrefix("Origin null")
            }
        for browser in cases {
            try await FaultCampaign.scenario(.input, "serve browser: \(browser.name)") { scenario in
                let port = server.port
                func fill(_ text: String) -> String {
                    text.replacingOccurrences(of: "{port}", with: "\(port)")
                        .replacingOccurrences(of: "{other}", with: "\(port + 1)")
                }
                let answer = try await RawHTTP.exchange(
                    port: port,
                    browser.method,
                    browser.path,
                    host: fill(browser.host ?? "127.0.0.1:{port}"),
                    headers: browser.headers.map { ($0.0, fill($0.1)) },
                    body: browser.body.map { Data($0.utf8) }
                )
                scenario.expect(browser.statuses.contains(answer.status), "\(answer)")
                scenario.expect(answer.errorCode != nil, "not a structured error: \(answer)")
                scenario.expect(!answer.text.contains("paragraph"), "document text went out: \(answer)")
                scenario.expect(
                    answer.headers["access-control-allow-origin"] == nil,
                    "a CORS grant to a foreign origin: \(answer.headers)"
                )
                scenario.notes.append("\(answer.status) \(answer.errorCode ?? "")")
            }
        }
        let metrics = String(decoding: try await server.exchange("GET", "/metrics").body, as: UTF8.self)
        #expect(metrics.contains("sluice_runs_started_total 0"), "a browser request started a run")
        #expect(try await server.stop().exitCode == 0)
    }

    @Test("connections that never finish: idle past the descriptor limit, slow heads and bodies, SIGTERM")
    func connectionFaults() async throws {
        let ws = try Workspace("faults-serve-connections")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)

        try await FaultCampaign.scenario(.fault, "serve: 300 idle connections, 128 descriptors") { scenario in
            let server = try await ServeProcess.start(
                ws,
                target,
                ["--set", "serve.idle_timeout_seconds=2"],
                launcher: ["/usr/bin/prlimit", "--nofile=128:128"]
            )
            var idle: [RawHTTP] = []
            for _ in 0..<300 { idle.append(try RawHTTP(port: server.port)) }
            for _ in 0..<3 {
                let health = try await RawHTTP.exchange(port: server.port, "GET", "/health", host: nil)
                scenario.expect(health.status == 200, "/health: \(health)")
            }
            idle.removeAll()
            let result = try await server.stop()
            scenario.expect(result.exitCode == 0, "\(result)")
        }

        guard FaultCampaign.sweep else { return }
        try await FaultCampaign.scenario(.fault, "serve: 100 slow-loris heads") { scenario in
            let server = try await ServeProcess.start(ws, target, ["--set", "serve.idle_timeout_seconds=1"])
            var heads: [RawHTTP] = []
            for _ in 0..<100 {
                let connection = try RawHTTP(port: server.port)
                try connection.send("GET /v1/documents HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\nX-A: ")
                heads.append(connection)
            }
            for connection in heads {
                let data = try await connection.readUntilClosed(timeout: .seconds(120))
                let status = data.isEmpty ? nil : (try? RawHTTP.parse(data))?.status
                scenario.expect(data.isEmpty || (400..<500).contains(status ?? 0), "a stalled head answered \(data)")
            }
            let health = try await RawHTTP.exchange(port: server.port, "GET", "/health", host: nil)
            scenario.expect(health.status == 200, "/health: \(health)")
            scenario.expect(try await server.stop().exitCode == 0, "stop")
        }

        try await FaultCampaign.scenario(.fault, "serve: 20 trickling bodies") { scenario in
            let server = try await ServeProcess.start(
                ws,
                target,
                ["--set", "serve.idle_timeout_seconds=1", "--set", "serve.request_timeout_seconds=2"]
            )
            var bodies: [RawHTTP] = []
            for _ in 0..<20 {
                bodies.append(try RawHTTP.openBody(port: server.port, length: 100_000))
            }
            let feeder = Task {
                for _ in 0..<2000 {
                    for connection in bodies { _ = try? connection.send(" ") }
                    try? await Task.sleep(for: .milliseconds(300))
                    if Task.isCancelled { return }
                }
            }
            for connection in bodies {
                let data = try await connection.readUntilClosed(timeout: .seconds(120))
                let status = (try? RawHTTP.parse(data))?.status
                scenario.expect(status == 408, "a trickling body answered \(String(describing: status))")
            }
            feeder.cancel()
            scenario.expect(try await server.stop().exitCode == 0, "stop")
        }

        try await FaultCampaign.scenario(.fault, "serve: SIGTERM with 10 stalled bodies") { scenario in
            let server = try await ServeProcess.start(
                ws,
                target,
                [
                    "--set", "serve.idle_timeout_seconds=3600", "--set", "serve.request_timeout_seconds=3600",
                    "--set", "serve.drain_timeout_seconds=1",
                ]
            )
            var stalled: [RawHTTP] = []
            for _ in 0..<10 {
                stalled.append(try RawHTTP.openBody(port: server.port, length: 100, first: "{"))
            }
            scenario.expect(try await server.exchange("GET", "/health").status == 200, "/health")
            let result = try await server.stop()
            scenario.expect(result.exitCode == 0, "\(result)")
            withExtendedLifetime(stalled) {}
        }
    }
}
