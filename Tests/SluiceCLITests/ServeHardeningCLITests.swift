import Foundation
import SluiceClient
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// What the API tells and how it answers the wrong request (issue 37, items 12 and 13): no path or
/// database address in open answers, a scratch folder that a planted symlink cannot redirect, 405 with
/// `Allow` for a wrong method, 400 for an invalid query value, a run killed by a signal reported as such,
/// and `run_id` on every `lock-held` 409.
@Suite(.serialized)
struct ServeHardeningCLITests {
    static func object(_ data: Data) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    @Test("/ready, 409 and 503 answers name no path of the machine")
    func noPaths() async throws {
        let ws = try Workspace("serve-paths")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        // Before the first run: the checkpoint is missing (503), the store is empty.
        let fresh = try await ServeProcess.start(ws, target)
        let missing = try await fresh.exchange("GET", "/v1/documents")
        #expect(missing.status == 503, "\(missing)")
        #expect(!String(decoding: missing.body, as: UTF8.self).contains(ws.root.path), "\(missing)")
        #expect(try await fresh.stop().exitCode == 0)

        _ = try await ServeCLITests.indexed(ws, target)
        let server = try await ServeProcess.start(ws, target)
        let ready = try await server.exchange("GET", "/ready")
        #expect(ready.status == 200)
        let text = String(decoding: ready.body, as: UTF8.self)
        #expect(!text.contains(ws.root.path), "/ready shows a path: \(text)")
        #expect((Self.object(ready.body)["store"] as? [String: Any])?["detail"] as? String == "local", "\(text)")

        try FileManager.default.createDirectory(at: target.state, withIntermediateDirectories: true)
        let lock = open(target.state.appendingPathComponent("run.lock").path, O_CREAT | O_RDWR, 0o644)
        #expect(flock(lock, LOCK_EX | LOCK_NB) == 0)
        let conflict = try await server.exchange("POST", "/v1/runs")
        close(lock)
        #expect(conflict.status == 409, "\(conflict)")
        let error = Self.object(conflict.body)["error"] as? [String: Any] ?? [:]
        #expect(error["code"] as? String == "lock-held")
        // The holder is not a run this server or the checkpoint knows: run_id is there, null.
        #expect(error.keys.contains("run_id"), "\(error)")
        #expect(!String(decoding: conflict.body, as: UTF8.self).contains(ws.root.path), "\(conflict)")
        #expect(try await server.stop().exitCode == 0)
    }

    @Test("a symlink planted where the scratch folder would be is not followed")
    func plantedScratch() async throws {
        let ws = try Workspace("serve-scratch")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        let temporary = ws.root.appendingPathComponent("tmp")
        let victim = ws.root.appendingPathComponent("victim")
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: true)
        let server = try await ServeProcess.start(ws, target, environment: ["TMPDIR": temporary.path])
        // The old, predictable name: planted after the server started, before its first run.
        try FileManager.default.createSymbolicLink(
            at: temporary.appendingPathComponent("sluice-serve-\(server.process.pid)"),
            withDestinationURL: victim
        )
        let client = server.client()
        var run = try await client.startRun()
        let deadline = ContinuousClock.now + .seconds(120)
        while !run.isFinished && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            run = try await client.run(id: run.id)
        }
        #expect(run.outcome == "success", "\(run)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victim.path).isEmpty, "wrote through the symlink")
        #expect(try await server.stop().exitCode == 0)
        // The server's own scratch folder is gone with it; the planted link is left alone.
        let left = try FileManager.default.contentsOfDirectory(atPath: temporary.path).filter {
            $0.hasPrefix("sluice-serve")
        }
        #expect(left == ["sluice-serve-\(server.process.pid)"], "\(left)")
    }

    @Test("a wrong method answers 405 with Allow; an invalid query value 400")
    func methodsAndQueries() async throws {
        let ws = try Workspace("serve-methods")
        defer { ws.cleanUp() }
        let server = try await ServeCLITests.served(ws)
        let cases: [(String, String, String)] = [
            ("GET", "/v1/search", "POST"), ("DELETE", "/v1/search", "POST"), ("PUT", "/v1/documents/plain.txt", "GET"),
            ("POST", "/health", "GET"), ("GET", "/v1/runs", "POST"), ("DELETE", "/v1/runs/123", "GET"),
            ("POST", "/v1/documents", "GET"),
        ]
        for (method, path, allow) in cases {
            let answer = try await server.exchange(method, path)
            #expect(answer.status == 405, "\(method) \(path): \(answer)")
            #expect(answer.headers["allow"] == allow, "\(method) \(path): \(answer.headers)")
            #expect(ServeProcess.errorCode(answer.body) == "method-not-allowed")
        }
        #expect(try await server.exchange("GET", "/v1/nothing").status == 404)
        for query in ["status=bogus", "status=", "limit=0", "limit=x", "sort=key", "status=indexed&statu=failed"] {
            let answer = try await server.exchange("GET", "/v1/documents?\(query)")
            #expect(answer.status == 400 && ServeProcess.errorCode(answer.body) == "usage", "\(query): \(answer)")
        }
        for query in ["status=indexed", "status=failed", "limit=2"] {
            #expect(try await server.exchange("GET", "/v1/documents?\(query)").status == 200, "\(query)")
        }
        #expect(try await server.stop().exitCode == 0)
    }

    @Test("a run killed by a signal is reported as killed by that signal, not as an exit code")
    func killedRun() async throws {
        let ws = try Workspace("serve-killed")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        try Corpus.write("A new note about weirs. ", to: ws.corpus.appendingPathComponent("new/weir.txt"))
        let server = try await ServeProcess.start(
            ws,
            target,
            environment: [
                "SLUICE_DEBUG_PAUSE_READ": "new/weir.txt", "SLUICE_DEBUG_RESUME": ws.file("never").path,
            ]
        )
        let client = server.client()
        let run = try await client.startRun()
        let paused = await server.process.waitForStderr(
            containing: "sluice-debug: paused at READ",
            timeout: .seconds(120)
        )
        try #require(paused, "\(server.process.stderrSoFar)")
        let children = Self.children(of: server.process.pid)
        try #require(children.count == 1, "children: \(children)")
        kill(children[0], SIGKILL)
        var report: [String: Any] = [:]
        let deadline = ContinuousClock.now + .seconds(120)
        while report["state"] as? String != "finished" && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            report = Self.object(try await server.exchange("GET", "/v1/runs/\(run.id)").body)
        }
        #expect(report["outcome"] as? String == "killed", "\(report)")
        #expect(report["signal"] as? Int == 9, "\(report)")
        #expect(report["exit_code"] == nil || report["exit_code"] is NSNull, "\(report)")
        #expect((report["error"] as? String)?.contains("signal 9") == true, "\(report)")
        #expect(try await server.stop().exitCode == 0)
    }

    /// The child processes of `pid` (every thread's `children` list).
    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }
}
