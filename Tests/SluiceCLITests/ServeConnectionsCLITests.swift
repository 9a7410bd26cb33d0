import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Connections that never finish (issue 37, items 5 and 7): idle ones, a request head or body that stops
/// half way or trickles, more connections than the process has descriptors, and addresses that cannot be
/// bound. Every wait is for an event (a close, an answer, an exit) under a generous deadline.
@Suite(.serialized)
struct ServeConnectionsCLITests {
    static let shortTimeouts = [
        "--set", "serve.idle_timeout_seconds=1", "--set", "serve.request_timeout_seconds=2",
    ]

    @Test("idle connections, a half-sent head and a half-sent body are closed by the server")
    func idleAndHalfSent() async throws {
        let ws = try Workspace("serve-idle")
        defer { ws.cleanUp() }
        let server = try await ServeCLITests.served(ws, Self.shortTimeouts)
        let idle = try RawHTTP(port: server.port)
        let head = try RawHTTP(port: server.port)
        try head.send("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        let body = try RawHTTP.openBody(port: server.port, length: 100, first: #"{"query""#)
        // Each is closed (an answer, if any, is an error: never a hang).
        for (name, connection) in [("idle", idle), ("head", head), ("body", body)] {
            let data = try await connection.readUntilClosed(timeout: .seconds(60))
            if !data.isEmpty {
                let answer = try RawHTTP.parse(data)
                #expect((400..<500).contains(answer.status), "\(name): \(answer)")
            }
        }
        #expect(try await server.stop().exitCode == 0)
    }

    @Test("a body that trickles in answers 408 once serve.request_timeout_seconds has passed")
    func tricklingBody() async throws {
        let ws = try Workspace("serve-trickle")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        // A long idle timeout: one byte each 0.3 s keeps the connection busy even when the feeder is delayed by
        // other work on the machine (a 1 s idle timeout closed it unanswered in a loaded run), so only the
        // body deadline ends it.
        let server = try await ServeProcess.start(
            ws,
            target,
            ["--set", "serve.idle_timeout_seconds=60", "--set", "serve.request_timeout_seconds=2"]
        )
        let connection = try RawHTTP.openBody(port: server.port, length: 100_000)
        let feeder = Task {
            for _ in 0..<2000 {
                guard (try? connection.send(" ")) != nil else { return }
                try? await Task.sleep(for: .milliseconds(300))
                if Task.isCancelled { return }
            }
        }
        let data = try await connection.readUntilClosed(timeout: .seconds(120))
        feeder.cancel()
        let answer = try RawHTTP.parse(data)
        #expect(answer.status == 408 && answer.errorCode == "timeout", "\(answer)")
        #expect(try await server.stop().exitCode == 0)
    }

    @Test("SIGTERM with a half-sent body in flight: the server stops (the drain has a deadline)")
    func shutdownWithAStalledBody() async throws {
        let ws = try Workspace("serve-stalled")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        // Long idle and request timeouts: only the drain deadline can end the stalled request.
        let server = try await ServeProcess.start(
            ws,
            target,
            [
                "--set", "serve.idle_timeout_seconds=3600", "--set", "serve.request_timeout_seconds=3600",
                "--set", "serve.drain_timeout_seconds=1",
            ]
        )
        let connection = try RawHTTP.openBody(port: server.port, length: 100, first: #"{"query""#)
        // The request has reached the server once a later one on another connection is answered.
        #expect(try await server.exchange("GET", "/health").status == 200)
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
        withExtendedLifetime(connection) {}
    }

    @Test("more idle connections than descriptors: /health still answers, the server keeps running")
    func descriptorExhaustion() async throws {
        let ws = try Workspace("serve-nofile")
        defer { ws.cleanUp() }
        let server = try await ServeCLITests.served(
            ws,
            ["--set", "serve.idle_timeout_seconds=2"],
            launcher: ["/usr/bin/prlimit", "--nofile=128:128"]
        )
        var idle: [RawHTTP] = []
        for _ in 0..<200 { idle.append(try RawHTTP(port: server.port)) }
        let health = try await RawHTTP.exchange(port: server.port, "GET", "/health", host: "127.0.0.1:\(server.port)")
        #expect(health.status == 200, "\(health)")
        #expect(server.process.isRunning)
        idle.removeAll()
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result)")
    }

    @Test("a port in use, an unknown host, a name that merely starts with 127.: exit 1 with the reason")
    func bindFailures() async throws {
        let ws = try Workspace("serve-bind")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        let first = try await ServeProcess.start(ws, target)
        let taken = try await ws.sluice(
            ["serve", ws.pipeline.path] + target.arguments + ["--port", "\(first.port)"],
            timeout: .seconds(120)
        )
        #expect(taken.exitCode == 1, "\(taken)")
        #expect(taken.stderr.contains("\(first.port)") && taken.stderr.contains("in use"), "\(taken)")
        #expect(try await first.stop().exitCode == 0)

        let unknown = try await ws.sluice(
            ["serve", ws.pipeline.path] + target.arguments
                + ["--host", "no-such-host.invalid", "--port", "0", "--set", "serve.api_key_env=SLUICE_TEST_TOKEN"],
            environment: ["SLUICE_TEST_TOKEN": "t0ken"],
            timeout: .seconds(120)
        )
        #expect(unknown.exitCode == 1, "\(unknown)")
        #expect(unknown.stderr.contains("no-such-host.invalid"), "\(unknown)")

        // Not loopback: refused without a token before any lookup.
        for host in ["127.evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "127.1"] {
            let result = try await ws.sluice(
                ["serve", ws.pipeline.path] + target.arguments + ["--host", host, "--port", "0"],
                timeout: .seconds(120)
            )
            #expect(result.exitCode == 1, "\(host): \(result)")
            #expect(result.stderr.contains("serve.api_key_env"), "\(host): \(result)")
        }
    }
}
