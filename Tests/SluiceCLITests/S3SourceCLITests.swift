import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `source.kind: s3` through the `sluice` binary, against a real S3 implementation on loopback (moto's
/// server, `s3_server.py`), with pages of 3 objects: a first load equals a run over the same files in a
/// folder; a no-op run lists and downloads nothing; objects changed, deleted and added are picked up (with
/// `--prune`); a listing that fails halfway prunes nothing; throttling (503 SlowDown) is retried; kill -9
/// then resume equals an uninterrupted run; the secret is in no output and no state file.
@Suite(.serialized)
struct S3SourceCLITests {
    static let secret = "sluice-test-secret-7f3a9c"
    static let environment: [String: String?] = [
        "SLUICE_TEST_S3_KEY": "sluice-test-key", "SLUICE_TEST_S3_SECRET": secret,
        // Neither the standard variables nor a shared file may stand in for the named ones.
        "AWS_ACCESS_KEY_ID": nil, "AWS_SECRET_ACCESS_KEY": nil, "AWS_SESSION_TOKEN": nil,
    ]

    /// The stand-in and its control requests.
    struct Bucket {
        let server: StandInServer

        /// moto's server with the bucket `corpus`, and the S3 pipeline reading it written to `s3.yaml` in `ws`.
        static func launch(for ws: Workspace) async throws -> Bucket {
            let bucket = Bucket(
                server: try await StandInServer.launch(script: "s3_server.py", arguments: ["--bucket", "corpus"])
            )
            do {
                try S3SourceCLITests.pipeline(port: bucket.server.port)
                    .write(to: ws.file("s3.yaml"), atomically: true, encoding: .utf8)
            } catch {
                bucket.server.stop()
                throw error
            }
            return bucket
        }

        func put(_ key: String, _ text: String) async throws {
            var request = HTTPRequest(method: "PUT", url: url(key), body: Array(text.utf8))
            request.pathAsIs = true  // a key with `..` segments is its own object
            let answer = try await HTTPClient.shared.send(request)
            #expect(answer.status == 200, "PUT \(key): \(answer.bodyText)")
        }

        func delete(_ key: String) async throws {
            let answer = try await HTTPClient.shared.send(HTTPRequest(method: "DELETE", url: url(key)))
            #expect(answer.status == 200, "DELETE \(key): \(answer.bodyText)")
        }

        /// LIST requests, GET object requests, injected faults, and the most GETs answered at once, so far.
        func stats() async throws -> (list: Int, get: Int, faults: Int, getMaxInFlight: Int) {
            let answer = try await HTTPClient.shared.send(HTTPRequest(url: server.baseURL + "/_standin/stats"))
            let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Int] ?? [:]
            return (
                object["list"] ?? -1, object["get"] ?? -1, object["faults"] ?? -1, object["get_max_in_flight"] ?? -1
            )
        }

        /// Faults and behaviours of the stand-in (`s3_server.py`): `holdGets` holds each GET until that many
        /// are in flight; `padGets` answers every GET with that many bytes more than the object holds.
        func faults(
            failContinuedLists: Bool = false,
            slowdownEvery: Int = 0,
            deny: Bool = false,
            holdGets: Int = 0,
            padGets: Int = 0,
            repeatLists: Bool = false
        ) async throws {
            let query =
                "fail_continued_lists=\(failContinuedLists ? 1 : 0)&slowdown_every=\(slowdownEvery)&deny=\(deny ? 1 : 0)"
                + "&hold_gets=\(holdGets)&pad_gets=\(padGets)&repeat_lists=\(repeatLists ? 1 : 0)"
            let answer = try await HTTPClient.shared.send(
                HTTPRequest(method: "POST", url: server.baseURL + "/_standin/faults?" + query)
            )
            #expect(answer.status == 200)
        }

        private func url(_ key: String) -> String {
            server.baseURL + "/_standin/object/"
                + (key.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? key)
        }
    }

    static func pipeline(port: Int) -> String {
        Workspace.pipelineYAML.replacingOccurrences(
            of: """
                source:
                  path: ./corpus

                """,
            with: """
                source:
                  kind: s3
                  s3:
                    bucket: corpus
                    prefix: docs
                    endpoint: http://127.0.0.1:\(port)
                    region: us-east-1
                    list_page_size: 3
                    max_retries: 1
                    concurrency: 2
                    access_key_env: SLUICE_TEST_S3_KEY
                    secret_key_env: SLUICE_TEST_S3_SECRET

                """
        )
    }

    /// `sluice run` of the S3 pipeline on `target`.
    static func run(_ ws: Workspace, _ target: Workspace.Target, _ extra: [String] = []) async throws -> CommandResult {
        try await ws.sluice(
            ["run", ws.file("s3.yaml").path] + target.arguments + ["--quiet", "--log-level", "info"] + extra,
            environment: environment,
            timeout: .seconds(240)
        )
    }

    /// The records as (id, document key, text): what both sources must agree on (metadata such as `mtime`
    /// differs by nature: a file's mtime, an object's LastModified).
    static func content(_ ws: Workspace, _ target: Workspace.Target, pipeline: URL? = nil) async throws -> [String] {
        let process = try ws.start(
            ["export", (pipeline ?? ws.pipeline).path] + target.arguments,
            environment: environment
        )
        let result = try await process.wait(timeout: .seconds(60))
        #expect(result.exitCode == 0, "\(result)")
        return try Export.records(Data(result.stdout.utf8)).map { "\($0.id) \($0.documentKey) \($0.text)" }.sorted()
    }

    /// A fresh folder run over `files` (key → text) under the same settings: the reference.
    static func folderReference(_ ws: Workspace, _ name: String, _ files: [String: String]) async throws -> [String] {
        try? FileManager.default.removeItem(at: ws.corpus)
        for (key, text) in files { try Corpus.write(text, to: ws.corpus.appendingPathComponent(key)) }
        let target = ws.target(name)
        try await ws.run(target, expecting: 0)
        return try await content(ws, target)
    }

    @Test("first load, no-op, changes with --prune, a failed listing, throttling, kill -9 and resume")
    func lifecycle() async throws {
        let ws = try Workspace("s3-source")
        defer { ws.cleanUp() }
        let bucket = try await Bucket.launch(for: ws)
        defer { bucket.server.stop() }

        var rng = SeededGenerator(seed: 0x53_0034)
        var files: [String: String] = [:]
        for index in 0..<8 {
            let key = "\(Corpus.folders[index % Corpus.folders.count])/doc \(index)&co.\(index % 2 == 0 ? "md" : "txt")"
            files[key] = Corpus.document(index: index, markdown: index % 2 == 0, bytes: 3_000, rng: &rng)
        }
        for (key, text) in files { try await bucket.put("docs/" + key, text) }
        // Outside the prefix, and excluded by include: never documents.
        try await bucket.put("other/outside.txt", "not under the prefix")
        try await bucket.put("docs/image.bin", "left out by include")

        // 1. A first load equals a run over the same files in a folder: same keys, ids and texts.
        let main = ws.target("main")
        let first = try await Self.run(ws, main)
        #expect(first.exitCode == 0, "\(first)")
        let reference = try await Self.folderReference(ws, "reference", files)
        #expect(reference.count > 8)
        #expect(try await Self.content(ws, main) == reference)
        var before = try await bucket.stats()
        #expect(before.get == 8, "one GET per object")

        // 2. A no-op run: the listing's pages (9 objects under the prefix, 3 a page: 3 pages) and no GET.
        let noop = try await Self.run(ws, main)
        #expect(noop.exitCode == 0, "\(noop)")
        var after = try await bucket.stats()
        #expect(after.list - before.list == 3, "LIST pages of a no-op run")
        #expect(after.get == before.get, "a no-op run downloads nothing")

        // 3. Changed, deleted, added; with --prune: equals a fresh folder run over the final files.
        let keys = files.keys.sorted()
        files[keys[1]] = Corpus.document(index: 101, markdown: false, bytes: 2_500, rng: &rng)
        try await bucket.put("docs/" + keys[1], files[keys[1]]!)
        files[keys[4]] = nil
        try await bucket.delete("docs/" + keys[4])
        files["faq/added.txt"] = Corpus.document(index: 102, markdown: false, bytes: 2_500, rng: &rng)
        try await bucket.put("docs/faq/added.txt", files["faq/added.txt"]!)
        before = try await bucket.stats()
        let changed = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(changed.exitCode == 0, "\(changed)")
        after = try await bucket.stats()
        #expect(after.get - before.get == 2, "only the changed and the added object are downloaded")
        let final = try await Self.folderReference(ws, "final", files)
        let afterChanges = try await Self.content(ws, main)
        #expect(afterChanges == final)

        // 4. A listing that fails on its second page (after its retry): the run stops (exit 6) and nothing
        // is pruned, although two objects are gone.
        try await bucket.delete("docs/" + keys[0])
        try await bucket.delete("docs/" + keys[2])
        try await bucket.faults(failContinuedLists: true)
        let failed = try await Self.run(ws, main, ["--prune", "--allow-mass-delete"])
        #expect(failed.exitCode == 6, "\(failed)")
        #expect(try await Self.content(ws, main) == afterChanges, "a failed listing pruned nothing")
        try await bucket.faults()
        try await bucket.put("docs/" + keys[0], files[keys[0]]!)
        try await bucket.put("docs/" + keys[2], files[keys[2]]!)

        // 5. Throttled: every 4th request answers 503 SlowDown; a full load into a new target still equals it.
        try await bucket.faults(slowdownEvery: 4)
        let throttledTarget = ws.target("throttled")
        let throttled = try await Self.run(ws, throttledTarget, ["--set", "source.s3.max_retries=6"])
        #expect(throttled.exitCode == 0, "\(throttled)")
        #expect(try await bucket.stats().faults > 0)
        try await bucket.faults()
        #expect(try await Self.content(ws, throttledTarget) == final)

        // 6. kill -9 while an object is being read, then resume: equals the uninterrupted run; the killed
        // run's download is cleaned up by the next run.
        let killedTarget = ws.target("killed")
        let resume = ws.file("resume-never")
        let marker = "doc_5_co"  // the temporary file keeps the key's name, made safe
        let process = try ws.start(
            ["run", ws.file("s3.yaml").path] + killedTarget.arguments + ["--quiet", "--log-level", "info"],
            environment: Self.environment.merging(
                ["SLUICE_DEBUG_PAUSE_READ": marker, "SLUICE_DEBUG_RESUME": resume.path],
                uniquingKeysWith: { $1 }
            )
        )
        let paused = await process.waitForStderr(containing: "sluice-debug: paused at READ", timeout: .seconds(600))
        try #require(paused, "never paused: \(process.stderrSoFar)")
        let fetched = killedTarget.state.appendingPathComponent("fetch")
        #expect(
            (try? FileManager.default.contentsOfDirectory(atPath: fetched.path))?.contains { $0.contains("doc_5_co") }
                == true,
            "the object being read is a private temporary file under the state's fetch/"
        )
        process.send(SIGKILL)
        _ = try await process.wait(timeout: .seconds(60))
        let getsBeforeResume = try await bucket.stats().get
        let resumedStats = ws.file("resumed.stats.json")
        let resumed = try await Self.run(ws, killedTarget, ["--stats-json", resumedStats.path])
        #expect(resumed.exitCode == 0, "\(resumed)")
        // Nothing committed before the kill is downloaded again: the resumed run's GETs are the documents it
        // indexed, no more (those the killed run committed are skipped and cost none; how many it committed
        // depends on timing, so the test does not count on any).
        let resumedRun = try ws.stats(resumedStats)
        #expect(
            try await bucket.stats().get - getsBeforeResume == resumedRun["documents_upserted"],
            "the resumed run downloads only what it indexes"
        )
        #expect(try await Self.content(ws, killedTarget) == final)
        #expect((try? FileManager.default.contentsOfDirectory(atPath: fetched.path)) ?? [] == [])

        // The secret is in no output and in no file of the state.
        for result in [first, noop, changed, failed, throttled, resumed] {
            #expect(!result.stdout.contains(Self.secret) && !result.stderr.contains(Self.secret))
        }
        for target in [main, throttledTarget, killedTarget] {
            let files = FileManager.default.enumerator(atPath: target.state.path)?.compactMap { $0 as? String } ?? []
            for file in files {
                let data = (try? Data(contentsOf: target.state.appendingPathComponent(file))) ?? Data()
                #expect(data.range(of: Data(Self.secret.utf8)) == nil, "\(file) holds the secret")
            }
        }
    }

    @Test("check: the bucket answers, the credentials are found, how many objects match")
    func check() async throws {
        let ws = try Workspace("s3-check")
        defer { ws.cleanUp() }
        let bucket = try await Bucket.launch(for: ws)
        defer { bucket.server.stop() }
        for index in 0..<4 { try await bucket.put("docs/notes/\(index).txt", "note \(index)") }
        try await bucket.put("docs/notes/left.bin", "left out")
        let target = ws.target("main")
        let ok = try await ws.sluice(
            ["check", ws.file("s3.yaml").path] + target.arguments,
            environment: Self.environment
        )
        #expect(ok.exitCode == 0, "\(ok)")
        #expect(ok.stdout.contains("s3://corpus/docs/: 4 objects match"), "\(ok)")
        #expect(!ok.stdout.contains(Self.secret) && !ok.stderr.contains(Self.secret))
        #expect(try await bucket.stats().list >= 1, "check lists the bucket")

        // Keys the bucket refuses (403 AccessDenied): a setting to fix (exit 1, as a refused key is for
        // every check), saying what S3 answered.
        try await bucket.faults(deny: true)
        let denied = try await ws.sluice(
            ["check", ws.file("s3.yaml").path] + target.arguments,
            environment: Self.environment
        )
        #expect(denied.exitCode == 1, "\(denied)")
        #expect(denied.stdout.contains("AccessDenied"), "\(denied)")
        #expect(!denied.stdout.contains(Self.secret) && !denied.stderr.contains(Self.secret))
        try await bucket.faults()

        // Without credentials: a setting to fix (exit 1), naming the variables.
        let missing = try await ws.sluice(
            ["check", ws.file("s3.yaml").path] + target.arguments,
            environment: Self.environment.merging(["SLUICE_TEST_S3_SECRET": nil], uniquingKeysWith: { $1 })
        )
        #expect(missing.exitCode == 1, "\(missing)")
        #expect(missing.stdout.contains("SLUICE_TEST_S3_SECRET"), "\(missing)")

        // An endpoint that does not answer: unavailable (exit 6).
        let unreachable = Self.pipeline(port: 9).replacingOccurrences(of: "max_retries: 1", with: "max_retries: 0")
        try unreachable.write(to: ws.file("down.yaml"), atomically: true, encoding: .utf8)
        let down = try await ws.sluice(
            ["check", ws.file("down.yaml").path] + target.arguments,
            environment: Self.environment
        )
        #expect(down.exitCode == 6, "\(down)")
    }
}
