import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// End-to-end tests of the `sluice` executable, run as a subprocess (in the spirit of
/// swift-argument-parser's `AssertExecuteCommand`). Each test builds its own corpus from the repository's
/// sample prose in a temporary folder and passes its own pipeline file, `--state`, `--set sink.path=…`
/// and `--source`, so tests are independent and never touch the repository's `.sluice/`.
///
/// Build the executable first: `swift build --scratch-path .build-cli --product sluice`.
/// Serialized: the runs are timing-sensitive and the machine is small.
@Suite(.serialized)
struct SluiceCLITests {
    // MARK: 1. Crash and resume

    @Test(
        "kill -9 at random moments, then resume: export equals an uninterrupted run's; only in-flight chunks are embedded again"
    )
    func crashAndResume() async throws {
        let ws = try Workspace("crash")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 300, into: ws.corpus, seed: 0x5EED_0001)
        let batch = 8
        let parallelism = 2
        let settings = [
            "--set", "embed.batch=\(batch)", "--set", "embed.parallelism=\(parallelism)", "--set", "run.buffer=4",
        ]

        // The reference: one uninterrupted run.
        let reference = ws.target("reference")
        let referenceAudit = ws.file("reference.audit")
        let referenceStatsURL = ws.file("reference.stats.json")
        try await ws.run(
            reference,
            settings + ["--stats-json", referenceStatsURL.path],
            auditLog: referenceAudit,
            expecting: 0
        )
        // Kill delays of 20–400 ms, but short enough on a fast machine that four kills fit in one run: a resumed
        // attempt goes faster than the reference (what earlier attempts embedded is cached), so at most a tenth of
        // the reference's wall each (a fifth let the fourth attempt finish first on a fast CPU: 3 kills).
        let referenceWallMilliseconds = Int(try ws.stats(referenceStatsURL).decoded.wallSeconds * 1000)
        let maxDelay = min(400, max(40, referenceWallMilliseconds / 10))
        let expected = try await ws.export(reference)
        let referenceStatus = try await ws.status(reference)
        #expect(referenceStatus.documents == ["indexed": keys.count])
        let referenceHashes = AuditLog.lines(referenceAudit)
        let referenceDistinct = Set(referenceHashes)
        #expect(referenceDistinct.count == referenceStatus.cacheCount, "every chunk sent to the embedder is cached")
        #expect(!referenceDistinct.isEmpty)
        // docs/DESIGN.md §2: identical text is embedded once per model, even across documents in flight.
        #expect(
            referenceHashes.count == referenceDistinct.count,
            "\(referenceHashes.count - referenceDistinct.count) chunks embedded twice in one uninterrupted run"
        )

        // Kill -9 at seeded random moments of the run, at least four times. A run that ends before its fourth
        // kill (a fast machine, or resumed attempts faster than the reference) is not a failure of Sluice: the
        // sequence starts again on a fresh target with delays half as long, so the test does not depend on speed.
        var lastTarget: Workspace.Target?
        var audit = ws.file("crashed-0.audit")
        var rng = SeededGenerator(seed: 0xC0FF_EE01)
        var kills = 0
        var attempts: [Range<Int>] = []  // audit-log lines written by each attempt
        for round in 0..<4 {
            let target = ws.target("crashed-\(round)")
            lastTarget = target
            audit = ws.file("crashed-\(round).audit")
            kills = 0
            attempts = []
            let shortest = max(2, 20 >> round)
            let longest = max(shortest, maxDelay >> round)
            var finishedEarly = false
            while kills < 6 && !finishedEarly {
                let before = AuditLog.lines(audit).count
                let process = try ws.start(
                    ws.runArguments(target, settings),
                    environment: ["SLUICE_EMBED_AUDIT_LOG": audit.path]
                )
                let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
                try #require(started, "attempt \(attempts.count + 1) did not start: \(process.stderrSoFar)")
                try await Task.sleep(for: .milliseconds(rng.int(in: shortest...longest)))
                process.send(SIGKILL)
                let result = try await process.wait(timeout: .seconds(30))
                if result.signaled {
                    #expect(result.status == SIGKILL, "\(result)")
                    kills += 1
                } else {
                    // The run ended before the kill: it must have ended well.
                    #expect(result.exitCode == 0, "\(result)")
                    finishedEarly = true
                }
                attempts.append(before..<AuditLog.lines(audit).count)
            }
            if kills >= 4 { break }
            print(
                "crashAndResume: round \(round) ended after \(kills) kills (delays \(shortest)–\(longest) ms); again, shorter"
            )
        }
        #expect(kills >= 4, "the corpus was indexed before four kills in every round; make the runs slower")
        let crashed = try #require(lastTarget)
        let progress = try await ws.status(crashed)

        // Resume to the end.
        let statsURL = ws.file("resume.stats.json")
        let before = AuditLog.lines(audit).count
        try await ws.run(crashed, settings + ["--stats-json", statsURL.path], auditLog: audit, expecting: 0)
        attempts.append(before..<AuditLog.lines(audit).count)
        let stats = try ws.stats(statsURL)
        #expect((stats["documents_upserted"] ?? -1) + (stats["documents_skipped"] ?? -1) == keys.count)
        #expect(stats["documents_failed"] == 0)
        // What the killed runs committed is kept: every document the state held as indexed is skipped, not
        // redone. (Whether a kill came after a commit depends on the machine's speed: under load the killed
        // attempts may commit nothing, so the check is against what they did commit.)
        let committed = progress.documents["indexed"] ?? 0
        #expect(
            (stats["documents_skipped"] ?? 0) >= committed,
            "\(committed) documents were committed before the resume, fewer were kept: \(progress.text)"
        )

        // The end state equals that of the uninterrupted run: no vector missing, duplicated or stale.
        let actual = try await ws.export(crashed)
        expectSameExport(actual, expected, "resumed after \(kills) kills")
        #expect(try await ws.status(crashed).documents == ["indexed": keys.count])

        // Embeddings already paid for are never paid for again: only what was in flight at a kill.
        let all = AuditLog.lines(audit)
        let distinct = Set(all)
        #expect(
            distinct.count == referenceDistinct.count,
            "distinct chunks embedded over all attempts vs. in the reference run"
        )
        #expect(distinct == referenceDistinct)
        // The bound: at a kill, at most `embed.parallelism` batches have been sent and not yet cached (one
        // more may be forming, but it has not been sent).
        let bound = kills * batch * (parallelism + 1)
        let surplus = all.count - distinct.count
        // Chunks sent in more than one attempt: exactly the re-work the kills caused (a chunk cached by an
        // attempt is found in the cache by every later one). At most the in-flight batches of each kill.
        let perAttempt = attempts.map { Set(all[$0]) }
        let reworkAcrossAttempts = perAttempt.reduce(0) { $0 + $1.count } - distinct.count
        #expect(
            reworkAcrossAttempts <= kills * batch * parallelism,
            "\(reworkAcrossAttempts) chunks re-embedded after \(kills) kills (in flight at most \(kills * batch * parallelism))"
        )
        // All lines against all distinct hashes also counts chunks sent twice within one attempt, which
        // the bug above adds (by a varying amount) on top of the re-work of the kills.
        #expect(
            surplus <= bound,
            "\(all.count) chunks sent, \(distinct.count) distinct: surplus \(surplus) over \(kills) kills (bound \(bound))"
        )
        print(
            "crashAndResume: \(kills) kills, \(all.count) chunks sent, \(distinct.count) distinct, surplus \(surplus) (across attempts \(reworkAcrossAttempts)), bound \(bound); reference sent \(referenceHashes.count) for \(referenceDistinct.count) distinct"
        )
    }

    @Test(
        "kill -9 during incremental --prune runs while files keep changing: the end state equals a fresh run over the final corpus"
    )
    func crashWhileCorpusChanges() async throws {
        let ws = try Workspace("crash-changes")
        defer { ws.cleanUp() }
        var keys = try Corpus.write(count: 150, into: ws.corpus, seed: 0x5EED_0011)
        let settings = ["--set", "embed.batch=8", "--set", "run.buffer=4", "--set", "sink.batch=4"]
        let main = ws.target("main")
        try await ws.run(main, settings, expecting: 0)

        // Each round: change the same "hot" documents again (rewrite, shrink, grow, or revert to the
        // original bytes *and* mtime), delete two others and add three, then start `run --prune` and kill
        // it at a seeded random moment. Changing the documents a killed run was writing is what catches
        // vectors that an attempt wrote but no checkpoint remembers.
        var rng = SeededGenerator(seed: 0xC4A_9E5)
        var originals: [String: (text: Data, modified: Date)] = [:]
        for key in keys {
            let url = ws.corpus.appendingPathComponent(key)
            let modified = try #require(
                try FileManager.default.attributesOfItem(atPath: url.path)[.modificationDate] as? Date
            )
            originals[key] = (try Data(contentsOf: url), modified)
        }
        let hot = Array(keys.filter { _ in rng.int(in: 0...3) == 0 }.prefix(40))
        var kills = 0
        var added = 0
        let rounds = 8
        for round in 0..<rounds {
            for key in hot {
                let url = ws.corpus.appendingPathComponent(key)
                switch rng.int(in: 0...4) {
                case 0, 1:
                    try Corpus.write(
                        Corpus.document(
                            index: 10_000 + round * 100 + rng.int(in: 0...99),
                            markdown: key.hasSuffix(".md"),
                            bytes: rng.int(in: 2_000...12_000),
                            rng: &rng
                        ),
                        to: url
                    )
                case 2:
                    let lines = try String(contentsOf: url, encoding: .utf8).components(separatedBy: "\n")
                    try Corpus.write(lines.prefix(max(3, lines.count / 2)).joined(separator: "\n") + "\n", to: url)
                case 3:
                    try Corpus.write(
                        try String(contentsOf: url, encoding: .utf8) + "\nAppended in round \(round).\n",
                        to: url
                    )
                default:
                    let original = try #require(originals[key])
                    try original.text.write(to: url)
                    try FileManager.default.setAttributes(
                        [.modificationDate: original.modified],
                        ofItemAtPath: url.path
                    )
                }
            }
            for _ in 0..<2 {
                let cold = keys.indices.filter { !hot.contains(keys[$0]) }
                let index = cold[rng.int(in: 0...(cold.count - 1))]
                try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(keys[index]))
                keys.remove(at: index)
            }
            for _ in 0..<3 {
                added += 1
                let key = "\(Corpus.folders[added % Corpus.folders.count])/added\(added).txt"
                try Corpus.write(
                    Corpus.document(
                        index: 20_000 + added,
                        markdown: false,
                        bytes: rng.int(in: 2_000...20_000),
                        rng: &rng
                    ),
                    to: ws.corpus.appendingPathComponent(key)
                )
                keys.append(key)
            }
            let process = try ws.start(ws.runArguments(main, settings + ["--prune"]))
            let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
            try #require(started, "round \(round) did not start: \(process.stderrSoFar)")
            try await Task.sleep(for: .milliseconds(rng.int(in: 0...160)))
            process.send(SIGKILL)
            let result = try await process.wait(timeout: .seconds(30))
            if result.signaled { kills += 1 } else { #expect(result.exitCode == 0, "\(result)") }
        }
        #expect(kills >= 4, "most runs ended before their kill; make them slower")

        try await ws.run(main, settings + ["--prune"], expecting: 0)
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": keys.count], "\(status.text)")
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        expectSameExport(
            try await ws.export(main),
            try await ws.export(fresh),
            "after \(kills) kills while the corpus changed"
        )
        print("crashWhileCorpusChanges: \(kills) kills over \(rounds) rounds, \(keys.count) documents at the end")
    }

    // MARK: 2. Incremental

    @Test("edit one, delete one, add one, run --prune: exactly those change, and the store equals a fresh run's")
    func incrementalWithPrune() async throws {
        let ws = try Workspace("incremental")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 40, into: ws.corpus, seed: 0x5EED_0002)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let before = try Export.records(try await ws.export(main))

        let edited = keys[7]
        let deleted = keys[13]
        let added = "notes/added-0001.txt"
        var rng = SeededGenerator(seed: 99)
        let editedURL = ws.corpus.appendingPathComponent(edited)
        let oldText = try String(contentsOf: editedURL, encoding: .utf8)
        let oldLines = oldText.components(separatedBy: "\n")
        let newText =
            oldLines.prefix(oldLines.count / 3).joined(separator: "\n") + "\n\n"
            + Corpus.document(index: 9001, markdown: edited.hasSuffix(".md"), bytes: 6_000, rng: &rng)
        try Corpus.write(newText, to: editedURL)
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(deleted))
        try Corpus.write(
            Corpus.document(index: 9002, markdown: false, bytes: 5_000, rng: &rng),
            to: ws.corpus.appendingPathComponent(added)
        )

        let statsURL = ws.file("incremental.stats.json")
        try await ws.run(main, ["--prune", "--stats-json", statsURL.path], expecting: 0)
        let stats = try ws.stats(statsURL)
        for key in [
            "documents_upserted", "documents_skipped", "documents_failed", "documents_pruned", "vectors_deleted",
            "chunks_embedded",
        ] {
            #expect(stats.keys.contains(key), "stats JSON lacks \(key)")
        }
        let count = keys.count  // one deleted, one added
        #expect(stats["documents_upserted"] == 2)
        #expect(stats["documents_skipped"] == count - 2)
        #expect(stats["documents_failed"] == 0)
        #expect(stats["documents_pruned"] == 1)

        let afterData = try await ws.export(main)
        let after = try Export.records(afterData)
        let deletedBefore = before.filter { $0.documentKey == deleted }
        #expect(!deletedBefore.isEmpty)
        #expect(!after.contains { $0.documentKey == deleted }, "vectors of the deleted file remain")
        #expect(after.contains { $0.documentKey == added })

        let editedBefore = Set(before.filter { $0.documentKey == edited }.map(\.id))
        let editedAfter = after.filter { $0.documentKey == edited }
        let stale = editedBefore.subtracting(editedAfter.map(\.id))
        #expect(!stale.isEmpty, "the edit should have removed some chunks")
        #expect(stats["vectors_deleted"] == deletedBefore.count + stale.count)
        #expect(
            editedAfter.map(\.ordinal).sorted() == Array(0..<editedAfter.count),
            "ordinals of the edited file are not 0..<n"
        )
        let newHash = ContentHash(of: Array(newText.utf8)).hex
        for record in editedAfter {
            #expect(
                newText.contains(record.text),
                "stale chunk \(record.id) #\(record.ordinal) of the edited file: \(record.text.prefix(80))"
            )
            #expect(
                record.metadata["content_hash"]?.text == newHash,
                "chunk \(record.ordinal) of the edited file carries an old content hash"
            )
        }
        // Everything else is untouched.
        let untouched = Set(keys).subtracting([edited, deleted])
        #expect(
            before.filter { untouched.contains($0.documentKey) } == after.filter { untouched.contains($0.documentKey) }
        )

        // Same as a fresh run over the final corpus.
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        expectSameExport(afterData, try await ws.export(fresh), "incremental vs. fresh run")
    }

    // MARK: 3. Unchanged re-run

    @Test("a re-run over an unchanged corpus makes no embedder call, even after every mtime changed")
    func unchangedRerunEmbedsNothing() async throws {
        let ws = try Workspace("unchanged")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 30, into: ws.corpus, seed: 0x5EED_0003)
        let main = ws.target("main")
        let audit = ws.file("audit")
        try await ws.run(main, auditLog: audit, expecting: 0)
        let firstLines = AuditLog.lines(audit).count
        #expect(firstLines > 0)
        let exported = try await ws.export(main)

        // Size and mtime unchanged: the stat-only fast path.
        let statsURL = ws.file("rerun.stats.json")
        try await ws.run(main, ["--stats-json", statsURL.path], auditLog: audit, expecting: 0)
        #expect(AuditLog.lines(audit).count == firstLines, "the unchanged re-run called the embedder")
        let stats = try ws.stats(statsURL)
        #expect(stats["chunks_embedded"] == 0)
        #expect(stats["embed_requests"] == 0)
        #expect(stats["documents_skipped"] == keys.count)
        #expect(stats["documents_upserted"] == 0)
        #expect(stats["bytes_read"] == 0, "the stat-only fast path should not read files")

        // New mtimes, same bytes: files are read and hashed, and still skipped.
        for key in keys { try touch(ws.corpus.appendingPathComponent(key)) }
        let touchedURL = ws.file("touched.stats.json")
        try await ws.run(main, ["--stats-json", touchedURL.path], auditLog: audit, expecting: 0)
        #expect(AuditLog.lines(audit).count == firstLines, "re-hashing unchanged files called the embedder")
        let touched = try ws.stats(touchedURL)
        #expect(touched["chunks_embedded"] == 0)
        #expect(touched["documents_skipped"] == keys.count)
        #expect(touched["documents_upserted"] == 0)
        #expect((touched["bytes_read"] ?? 0) > 0)
        expectSameExport(try await ws.export(main), exported, "after touching every file")
    }

    // MARK: 4. Lock

    @Test("a second run on a locked state exits 3 at once; the first finishes with 0")
    func concurrentRunIsRefused() async throws {
        let ws = try Workspace("lock")
        defer { ws.cleanUp() }
        try Corpus.write(count: 120, into: ws.corpus, seed: 0x5EED_0004)
        let main = ws.target("main")
        let first = try ws.start(ws.runArguments(main, slowRunSettings))
        let started = await first.waitForStderr(containing: "run started", timeout: .seconds(600))
        try #require(started, "the first run did not start: \(first.stderrSoFar)")

        let second = try await ws.sluice(ws.runArguments(main), timeout: .seconds(20))
        #expect(second.exitCode == 3, "\(second)")
        #expect(second.seconds < 5, "the second run took \(second.seconds) s to give up")
        #expect(second.stderr.lowercased().contains("lock"), "\(second)")
        #expect(first.isRunning, "the first run ended before the second was tried; make it slower")
        // Read-only commands still work while the run holds the lock.
        let status = try await ws.sluice(["status", ws.pipeline.path] + main.arguments)
        #expect(status.exitCode == 0, "\(status)")
        #expect(status.stdout.contains("still running"), "\(status)")

        let result = try await first.wait(timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")

        // The lock is released with the run, and the refused run changed nothing.
        try await ws.run(main, expecting: 0)
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        expectSameExport(try await ws.export(main), try await ws.export(fresh), "locked state vs. fresh run")
    }

    // MARK: 5. Bad input

    @Test(
        "empty, invalid UTF-8 and binary .txt files fail with reasons (exit 2); good files are indexed; the failures are then known, not retried"
    )
    func badInputFailsPerDocument() async throws {
        let ws = try Workspace("bad")
        defer { ws.cleanUp() }
        let good = try Corpus.write(count: 8, into: ws.corpus, seed: 0x5EED_0005)
        var rng = SeededGenerator(seed: 5)
        let prefix = Corpus.document(index: 500, markdown: false, bytes: 1_500, rng: &rng)
        let invalidOffset = prefix.utf8.count
        try Data().write(to: ws.corpus.appendingPathComponent("faq/zero-byte.txt"))
        try (Data(prefix.utf8) + Data([0x43, 0x61, 0x66, 0xE9, 0x20]) + Data("au lait\n".utf8))
            .write(to: ws.corpus.appendingPathComponent("notes/latin1.txt"))
        try Data((0..<4096).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
            .write(to: ws.corpus.appendingPathComponent("notes/random-binary.txt"))
        let bad = ["faq/zero-byte.txt", "notes/latin1.txt", "notes/random-binary.txt"]

        let main = ws.target("main")
        let firstStatsURL = ws.file("first.stats.json")
        try await ws.run(main, ["--stats-json", firstStatsURL.path], expecting: 2)
        let firstStats = try ws.stats(firstStatsURL)
        #expect(firstStats["documents_failed"] == 3)
        #expect(firstStats["documents_upserted"] == good.count)

        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": good.count, "failed": 3], "\(status.text)")
        let failures = status.failures
        #expect(Set(failures.keys) == Set(bad), "\(status.text)")
        let zero = failures["faq/zero-byte.txt"]?.lowercased() ?? ""
        #expect(zero.contains("zero-byte") || zero.contains("empty"), "\(zero)")
        let latin1 = failures["notes/latin1.txt"] ?? ""
        #expect(latin1.contains("UTF-8") && latin1.contains("offset \(invalidOffset + 3)"), "\(latin1)")
        #expect(failures["notes/random-binary.txt"]?.lowercased().contains("binary") == true, "\(failures)")

        let exported = try Export.records(try await ws.export(main))
        #expect(Set(exported.map(\.documentKey)) == Set(good))

        // Their failures cannot change while the bytes stay the same (docs/DESIGN.md §11): the next run
        // skips them as known failures and exits 0; status still lists them, marked known.
        let statsURL = ws.file("rerun.stats.json")
        try await ws.run(main, ["--stats-json", statsURL.path], expecting: 0)
        let stats = try ws.stats(statsURL)
        #expect(stats["documents_failed"] == 0)
        #expect(stats["documents_known_failures"] == 3)
        #expect(stats["documents_skipped"] == good.count + 3)
        #expect(stats["documents_upserted"] == 0)
        let known = try await ws.status(main).failures
        #expect(Set(known.keys) == Set(bad))
        #expect(known.values.allSatisfy { $0.hasSuffix("[known]") }, "\(known)")

        // --retry-failed retries them (and they fail again).
        try await ws.run(main, ["--retry-failed"], expecting: 2)
    }

    // MARK: 6. Configuration errors

    @Test(
        "configuration and usage errors exit 1 before touching the state",
        arguments: [
            (["--set", "chunk.max_tokens=abc"], "chunk.max_tokens"),
            (["--set", "chunk.bogus=1"], "chunk.bogus"),
            (["--set", "embed.provider=nonesuch"], "embed.provider"),
            (["--set", "no-equals-sign"], "key=value"),
            (["--no-such-flag"], "--no-such-flag"),
        ]
    )
    func configurationErrorExitsOne(arguments: [String], mention: String) async throws {
        let ws = try Workspace("config")
        defer { ws.cleanUp() }
        try Corpus.write(count: 3, into: ws.corpus, seed: 0x5EED_0006)
        let main = ws.target("main")
        let result = try await ws.run(main, arguments)
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains(mention), "\(result)")
        #expect(!FileManager.default.fileExists(atPath: main.state.path), "a refused run created its state folder")
    }

    @Test("an unknown subcommand or a missing pipeline file exits 1")
    func usageErrorsExitOne() async throws {
        let ws = try Workspace("usage")
        defer { ws.cleanUp() }
        let unknown = try await ws.sluice(["frobnicate"])
        #expect(unknown.exitCode == 1, "\(unknown)")
        let missing = try await ws.sluice(["run", ws.file("missing.yaml").path] + ws.target("main").arguments)
        #expect(missing.exitCode == 1, "\(missing)")
        #expect(missing.stderr.contains("missing.yaml"), "\(missing)")
    }

    @Test("changing the embedder is refused (exit 1) unless --reembed, which equals a fresh run with the new embedder")
    func embedderChangeNeedsReembed() async throws {
        let ws = try Workspace("embedder")
        defer { ws.cleanUp() }
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x5EED_0012)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let exported = try await ws.export(main)

        let refused = try await ws.run(main, ["--set", "embed.dimensions=32"])
        #expect(refused.exitCode == 1, "\(refused)")
        #expect(refused.stderr.contains("--reembed"), "\(refused)")
        expectSameExport(try await ws.export(main), exported, "after a refused embedder change")

        try await ws.run(main, ["--set", "embed.dimensions=32", "--reembed"], expecting: 0)
        let fresh = ws.target("fresh")
        try await ws.run(fresh, ["--set", "embed.dimensions=32"], expecting: 0)
        let reembedded = try await ws.export(main)
        expectSameExport(reembedded, try await ws.export(fresh), "re-embedded vs. fresh run with the new embedder")
        #expect(try Export.records(reembedded).allSatisfy { $0.vector.count == 32 })
    }

    // MARK: 7. Dry run

    @Test("run --dry-run --prune lists additions, changes and deletions and changes nothing")
    func dryRunChangesNothing() async throws {
        let ws = try Workspace("dryrun")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 20, into: ws.corpus, seed: 0x5EED_0007)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let exported = try await ws.export(main)
        let records = try Export.records(exported)
        let statusBefore = try await ws.status(main)

        let changed = keys[2]
        let touched = keys[5]
        let deleted = keys[9]
        let added = "faq/new-0001.md"
        let changedURL = ws.corpus.appendingPathComponent(changed)
        try Corpus.write(
            try String(contentsOf: changedURL, encoding: .utf8) + "\nOne more paragraph, added after the first run.\n",
            to: changedURL
        )
        try touch(ws.corpus.appendingPathComponent(touched))
        try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(deleted))
        var rng = SeededGenerator(seed: 7)
        try Corpus.write(
            Corpus.document(index: 7001, markdown: true, bytes: 4_000, rng: &rng),
            to: ws.corpus.appendingPathComponent(added)
        )

        let dry = try await ws.sluice(ws.runArguments(main, ["--dry-run", "--prune"]))
        #expect(dry.exitCode == 0, "\(dry)")
        let vectors = records.filter { $0.documentKey == deleted }.count
        let lines = dry.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines.first
                == "dry run: 1 to add, 1 changed, 0 with new metadata only, 0 failed before (retried), \(keys.count - 2) unchanged (skipped), 0 known failures (skipped), 1 to delete (\(vectors) vectors)",
            "\(dry.stdout)"
        )
        #expect(
            Set(lines.dropFirst().filter { !$0.hasPrefix("to embed: ") })
                == ["  add  \(added)", "  change  \(changed)", "  delete  \(deleted)"],
            "\(dry.stdout)"
        )
        // What the added and the changed document cost the embedder (DryRunCostCLITests checks the figures).
        #expect(lines.contains { $0.hasPrefix("to embed: ") && $0.contains(" of 2 documents ") }, "\(dry.stdout)")

        // Nothing changed: the store, the checkpoint, and so the next dry run's answer.
        expectSameExport(try await ws.export(main), exported, "after a dry run")
        #expect(try await ws.status(main).text == statusBefore.text)
        let again = try await ws.sluice(ws.runArguments(main, ["--dry-run", "--prune"]))
        #expect(again.exitCode == 0, "\(again)")
        #expect(again.stdout == dry.stdout)

        // And the real run does what the dry run said.
        let statsURL = ws.file("real.stats.json")
        try await ws.run(main, ["--prune", "--stats-json", statsURL.path], expecting: 0)
        let stats = try ws.stats(statsURL)
        #expect(stats["documents_upserted"] == 2)
        #expect(stats["documents_skipped"] == keys.count - 2)
        #expect(stats["documents_pruned"] == 1)
    }

    // MARK: 8. Mass-delete guard

    @Test(
        "--prune refuses to delete more than run.max_delete_fraction (exit 7, nothing deleted) unless --allow-mass-delete"
    )
    func massDeleteGuard() async throws {
        let ws = try Workspace("massdelete")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 10, into: ws.corpus, seed: 0x5EED_0008, minBytes: 4_000, maxBytes: 6_000)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let exported = try await ws.export(main)
        let gone = Array(keys.prefix(5))
        for key in gone { try FileManager.default.removeItem(at: ws.corpus.appendingPathComponent(key)) }

        let refused = try await ws.run(main, ["--prune"])
        #expect(refused.exitCode == 7, "\(refused)")
        #expect(refused.stderr.contains("max_delete_fraction"), "\(refused)")
        expectSameExport(try await ws.export(main), exported, "after a refused prune")
        #expect(try await ws.status(main).documents == ["indexed": keys.count])

        let dry = try await ws.sluice(ws.runArguments(main, ["--dry-run", "--prune"]))
        #expect(dry.exitCode == 7, "\(dry)")
        #expect(dry.stdout.contains("refused:") && dry.stdout.contains("max_delete_fraction"), "\(dry)")

        let statsURL = ws.file("allowed.stats.json")
        try await ws.run(main, ["--prune", "--allow-mass-delete", "--stats-json", statsURL.path], expecting: 0)
        let stats = try ws.stats(statsURL)
        #expect(stats["documents_pruned"] == gone.count)
        #expect(stats["documents_skipped"] == keys.count - gone.count)
        let after = try await ws.export(main)
        #expect(!(try Export.records(after)).contains { gone.contains($0.documentKey) })
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        expectSameExport(after, try await ws.export(fresh), "after an allowed mass delete vs. fresh run")
    }

    // MARK: 9. SIGINT

    @Test(
        "SIGINT or SIGTERM stops gracefully with exit 4; running again completes and equals an uninterrupted run",
        arguments: [SIGINT, SIGTERM]
    )
    func interruptAndResume(signal: Int32) async throws {
        let ws = try Workspace("signal\(signal)")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 120, into: ws.corpus, seed: 0x5EED_0009)
        let reference = ws.target("reference")
        try await ws.run(reference, expecting: 0)
        let expected = try await ws.export(reference)

        let main = ws.target("main")
        let interruptedStatsURL = ws.file("interrupted.stats.json")
        let process = try ws.start(ws.runArguments(main, slowRunSettings + ["--stats-json", interruptedStatsURL.path]))
        let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
        try #require(started, "the run did not start: \(process.stderrSoFar)")
        try await Task.sleep(for: .milliseconds(800))
        try #require(process.isRunning, "the run ended before it could be interrupted; make it slower")
        let signalled = ContinuousClock.now
        process.send(signal)
        let result = try await process.wait(timeout: .seconds(30))
        let stopSeconds = SluiceProcess.seconds(signalled.duration(to: .now))
        #expect(result.exitCode == 4, "\(result)")
        #expect(stopSeconds < 5, "took \(stopSeconds) s to stop after signal \(signal)")
        #expect(result.stderr.contains("signal received"), "\(result)")

        // Graceful: what was in flight finished and was committed; nothing is left failed.
        let status = try await ws.status(main)
        let indexed = status.documents["indexed"] ?? 0
        #expect(status.documents["failed"] == nil, "\(status.text)")
        #expect(indexed > 0 && indexed < keys.count, "\(status.text)")
        #expect(status.text.contains("interrupted"), "\(status.text)")
        let interrupted = try ws.stats(interruptedStatsURL)
        #expect(interrupted.decoded.interrupted)
        #expect(interrupted["documents_upserted"] == indexed)
        #expect(interrupted["documents_failed"] == 0)
        let settled =
            (interrupted["documents_upserted"] ?? 0) + (interrupted["documents_skipped"] ?? 0)
            + (interrupted["documents_failed"] ?? 0)
        #expect(interrupted["documents_not_reached"] == keys.count - settled)

        let statsURL = ws.file("resume.stats.json")
        try await ws.run(main, ["--stats-json", statsURL.path], expecting: 0)
        let stats = try ws.stats(statsURL)
        #expect(stats["documents_skipped"] == indexed)
        #expect(stats["documents_upserted"] == keys.count - indexed)
        expectSameExport(try await ws.export(main), expected, "resumed after signal \(signal)")
    }

    @Test("a second SIGINT stops at once with exit 4, and the checkpoint is still consistent")
    func secondInterruptAbortsAtOnce() async throws {
        let ws = try Workspace("sigint2")
        defer { ws.cleanUp() }
        try Corpus.write(count: 60, into: ws.corpus, seed: 0x5EED_0010)
        let main = ws.target("main")
        let process = try ws.start(ws.runArguments(main, slowRunSettings))
        let started = await process.waitForStderr(containing: "run started", timeout: .seconds(600))
        try #require(started, "the run did not start: \(process.stderrSoFar)")
        try await Task.sleep(for: .milliseconds(500))
        try #require(process.isRunning)
        process.send(SIGINT)
        _ = await process.waitForStderr(containing: "signal received", timeout: .seconds(5))
        let signalled = ContinuousClock.now
        process.send(SIGINT)
        let result = try await process.wait(timeout: .seconds(30))
        #expect(result.exitCode == 4, "\(result)")
        #expect(SluiceProcess.seconds(signalled.duration(to: .now)) < 2)

        try await ws.run(main, expecting: 0)
        let fresh = ws.target("fresh")
        try await ws.run(fresh, expecting: 0)
        expectSameExport(try await ws.export(main), try await ws.export(fresh), "resumed after a double SIGINT")
    }
}
