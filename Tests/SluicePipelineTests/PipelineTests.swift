import Dispatch
import Foundation
import SluiceCore
import SluiceExtract
import SluiceState
import SluiceTesting
import Synchronization
import Testing

@testable import SluicePipeline

#if canImport(Glibc)
import Glibc
#endif

@Suite struct PipelineTests {
    @Test func slowSinkKeepsDocumentsInFlightBoundedAndDropsNothing() async throws {
        let harness = try PipelineHarness(upsertDelay: .milliseconds(15)) {
            $0.run.buffer = 2
            $0.run.upsertParallelism = 1
            $0.extract.parallelism = 2
            $0.chunk.parallelism = 2
            $0.embed.batch = 4
            $0.embed.parallelism = 2
        }
        defer { harness.cleanUp() }
        let keys = try TestCorpus.writeTextDocuments(count: 300, into: harness.source, paragraphs: 2)
        let pipeline = harness.pipeline()
        let stats = try await pipeline.run()
        // Nothing dropped: every document upserted, every chunk stored.
        #expect(stats.documentsUpserted == keys.count)
        #expect(stats.documentsFailed == 0)
        #expect(harness.sink.records.count == stats.chunks)
        #expect(Set(harness.sink.records.map(\.documentKey)) == Set(keys))
        // Bounded: the scanner was held back by the buffers, never ran ahead through the corpus.
        #expect(stats.maxDocumentsInFlight <= pipeline.inFlightBound)
        #expect(stats.maxDocumentsInFlight < keys.count / 2)
        let scan = try #require(stats.phases.first { $0.name == "scan" })
        #expect(scan.blockedSeconds > 0.5, "the scanner must have been suspended by the full buffer")
    }

    @Test func blockingExtractionRunsOnDedicatedThreadsNotTheCooperativePool() async throws {
        var harness = try PipelineHarness { $0.extract.parallelism = 2 }
        defer { harness.cleanUp() }
        let extractor = SleepyExtractor(milliseconds: 100)
        harness.extractors = .init(extractors: [extractor])
        try TestCorpus.writeTextDocuments(count: 12, into: harness.source, paragraphs: 1)
        let maxGap = Mutex(Duration.zero)
        let stop = Atomic<Bool>(false)
        let heartbeat = Task {
            let clock = ContinuousClock()
            var last = clock.now
            while !stop.load(ordering: .relaxed) {
                try? await Task.sleep(for: .milliseconds(10))
                let now = clock.now
                maxGap.withLock { $0 = max($0, last.duration(to: now)) }
                last = now
            }
        }
        let stats = try await harness.run()
        stop.store(true, ordering: .relaxed)
        await heartbeat.value
        #expect(stats.documentsUpserted == 12)
        // Every blocking call ran on the extract executor's own threads, never on a cooperative-pool thread.
        let threads = extractor.threadNames.withLock { $0 }
        #expect(threads.count == 12)
        #expect(threads.allSatisfy { $0 == "sl-extract" }, "\(threads)")
        // The heartbeat is informational (timing is not asserted: the machines are noisy); with the calls on
        // the pool it would stall for 100 ms at a time.
        print("heartbeat: largest gap \(maxGap.withLock { $0 }) while extraction blocked 12 × 100 ms")
    }

    /// Plain text (`Extractor.extractsInline`) is extracted on the stage's own thread, without a hand-off;
    /// every other extractor still runs on the executor's threads. The files are read there either way.
    @Test func onlyInlineExtractorsRunOnTheStagesThread() async throws {
        var harness = try PipelineHarness { $0.extract.parallelism = 2 }
        defer { harness.cleanUp() }
        let slow = SleepyExtractor(milliseconds: 1, accepting: "slow")
        for index in 0..<6 {
            try "Text number \(index).".write(
                to: harness.source.appendingPathComponent("d\(index).\(index % 2 == 0 ? "slow" : "txt")"),
                atomically: true,
                encoding: .utf8
            )
        }
        let recorder = LabelRecordingExtractor(inner: TextExtractor())
        harness.extractors = .init(extractors: [slow, recorder])
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 6)
        #expect(slow.threadNames.withLock { $0 } == ["sl-extract", "sl-extract", "sl-extract"])
        #expect(recorder.labels.withLock { $0 } == [nil, nil, nil], "no executor thread for plain text")
    }

    @Test func unchangedCorpusIsSkippedWithoutEmbedding() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 20, into: harness.source)
        let first = try await harness.run()
        #expect(first.documentsUpserted == 20)
        let requests = harness.embedder.requests
        let second = try await harness.run()
        #expect(second.documentsSkipped == 20)
        #expect(second.documentsUpserted == 0)
        #expect(harness.embedder.requests == requests)
        // Touching a file (mtime changes, bytes do not) reads and hashes it but embeds nothing.
        let touched = harness.source.appendingPathComponent("group0/doc0.txt")
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: 60)],
            ofItemAtPath: touched.path
        )
        let third = try await harness.run()
        #expect(third.documentsSkipped == 20)
        #expect(third.bytesRead > 0)
        #expect(harness.embedder.requests == requests)
    }

    @Test func identicalTextIsEmbeddedOnce() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let text = "The same paragraph in two files.\n\nAnd a second paragraph that repeats too."
        try text.write(to: harness.source.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try text.write(to: harness.source.appendingPathComponent("b.txt"), atomically: true, encoding: .utf8)
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 2)
        #expect(harness.embedder.timesEmbedded.values.allSatisfy { $0 == 1 })
        // Both documents have their own vectors (ids differ by key), with the same embedding.
        let records = harness.sink.records
        #expect(Set(records.map(\.documentKey)) == ["a.txt", "b.txt"])
    }

    /// docs/DESIGN.md §2: the same bytes under several keys are extracted once (here with two extract workers, so
    /// copies are in flight together as well as one after the other); each key still gets its own vectors.
    @Test func identicalBytesUnderSeveralKeysAreExtractedOnce() async throws {
        var harness = try PipelineHarness { $0.extract.parallelism = 2 }
        defer { harness.cleanUp() }
        let extractor = SleepyExtractor(milliseconds: 20)
        harness.extractors = .init(extractors: [extractor])
        let copy = "A report filed in three folders.\n\nIts second paragraph, the same in each copy."
        for folder in ["a", "b", "c"] {
            let directory = harness.source.appendingPathComponent(folder)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try copy.write(to: directory.appendingPathComponent("report.txt"), atomically: true, encoding: .utf8)
        }
        try "Something else entirely.".write(
            to: harness.source.appendingPathComponent("other.txt"),
            atomically: true,
            encoding: .utf8
        )
        try "And a fifth document.".write(
            to: harness.source.appendingPathComponent("fifth.txt"),
            atomically: true,
            encoding: .utf8
        )
        let stats = try await harness.run()
        #expect(stats.documentsUpserted == 5)
        #expect(
            extractor.threadNames.withLock { $0.count } == 3,
            "one extraction for the three copies, one each for the others"
        )
        #expect(stats.extractionsShared == 2)
        let keys = Set(harness.sink.records.map(\.documentKey))
        #expect(keys == ["a/report.txt", "b/report.txt", "c/report.txt", "other.txt", "fifth.txt"])
        #expect(harness.embedder.timesEmbedded.values.allSatisfy { $0 == 1 })
    }

    @Test func editDeleteAddLeavesNoStaleVector() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 10, into: harness.source)
        _ = try await harness.run()
        let edited = harness.source.appendingPathComponent("group1/doc1.txt")
        try "Completely new text for document one.\n\nNothing of the old.".write(
            to: edited,
            atomically: true,
            encoding: .utf8
        )
        try FileManager.default.removeItem(at: harness.source.appendingPathComponent("group2/doc2.txt"))
        try "A brand new document.".write(
            to: harness.source.appendingPathComponent("new.txt"),
            atomically: true,
            encoding: .utf8
        )
        var options = RunOptions()
        options.prune = true
        options.allowMassDelete = true
        let stats = try await harness.run(options)
        #expect(stats.documentsUpserted == 2)
        #expect(stats.documentsSkipped == 8)
        #expect(stats.documentsPruned == 1)
        let records = harness.sink.records
        #expect(!records.contains { $0.documentKey == "group2/doc2.txt" })
        let editedTexts = records.filter { $0.documentKey == "group1/doc1.txt" }.map(\.text)
        #expect(editedTexts.allSatisfy { !$0.contains("Paragraph") })
        #expect(!editedTexts.isEmpty)
        // The sink holds exactly what the checkpoint says.
        let checkpoint = try CheckpointStore(
            directory: URL(fileURLWithPath: harness.configuration.state),
            readOnly: true
        )
        var tracked = Set<VectorID>()
        try checkpoint.forEachDocument { tracked.formUnion($0.chunkIDs) }
        #expect(tracked == Set(records.map(\.id)))
    }

    @Test func sinkFailureFailsDocumentsAndTheNextRunRepairsEverything() async throws {
        let harness = try PipelineHarness { $0.run.upsertParallelism = 1 }
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 15, into: harness.source)
        harness.sink.failNextUpserts(1)
        let first = try await harness.run()
        #expect(first.documentsFailed > 0)
        #expect(first.failuresByCode["sink-failed"] == first.documentsFailed)
        #expect(first.exitCode == .documentsFailed)
        let requests = harness.embedder.requests
        let second = try await harness.run()
        #expect(second.documentsUpserted == first.documentsFailed)
        #expect(second.documentsFailed == 0)
        // The retry re-used the cached embeddings.
        #expect(harness.embedder.requests == requests)
        let checkpoint = try CheckpointStore(
            directory: URL(fileURLWithPath: harness.configuration.state),
            readOnly: true
        )
        var tracked = Set<VectorID>()
        var pending = 0
        try checkpoint.forEachDocument {
            tracked.formUnion($0.chunkIDs)
            pending += $0.pendingIDs.count
        }
        #expect(tracked == Set(harness.sink.records.map(\.id)))
        #expect(pending == 0)
    }

    @Test func secondRunOnTheSameStateIsRefusedWhileTheFirstHoldsTheLock() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        let lock = try StateLock(directory: URL(fileURLWithPath: harness.configuration.state))
        await #expect(throws: SluiceError.self) { try await harness.run() }
        do {
            _ = try await harness.run()
        } catch let error as SluiceError {
            #expect(error.code == .lockHeld)
        }
        withExtendedLifetime(lock) {}
    }

    @Test func changingTheEmbedderIsRefusedUnlessReembedding() async throws {
        let harness = try PipelineHarness()
        defer { harness.cleanUp() }
        try TestCorpus.writeTextDocuments(count: 3, into: harness.source)
        _ = try await harness.run()
        let checkpoint = try CheckpointStore(directory: URL(fileURLWithPath: harness.configuration.state))
        try checkpoint.setMetadata("embedder", "other/model@8")
        do {
            _ = try await harness.run()
            Issue.record("expected an embedder mismatch")
        } catch let error as SluiceError {
            #expect(error.code == .embedderMismatch)
        }
        var options = RunOptions()
        options.reembed = true
        let stats = try await harness.run(options)
        #expect(stats.documentsUpserted == 3)
    }
}

/// Blocks its thread for a while per document, like a C library would, and records which thread ran it.
final class SleepyExtractor: Extractor {
    let milliseconds: Int
    /// The file extension it takes; nil: every file.
    let accepting: String?
    let threadNames = Mutex<[String]>([])
    init(milliseconds: Int, accepting: String? = nil) {
        self.milliseconds = milliseconds
        self.accepting = accepting
    }
    var name: String { "sleepy" }
    func accepts(_ input: ExtractionInput) -> Bool { accepting.map { input.fileURL.pathExtension == $0 } ?? true }
    func extract(_ input: ExtractionInput) throws -> ExtractedText {
        let name = BlockingExecutor.currentLabel ?? Thread.current.name ?? "unknown"
        threadNames.withLock { $0.append(name) }
        usleep(useconds_t(milliseconds * 1000))
        return ExtractedText(sections: [TextSection(text: String(decoding: input.bytes, as: UTF8.self))])
    }
}

/// An extractor that records the executor label of the thread each extraction runs on (nil: none).
final class LabelRecordingExtractor<Inner: Extractor>: Extractor {
    let inner: Inner
    let labels = Mutex<[String?]>([])
    init(inner: Inner) { self.inner = inner }
    var name: String { inner.name }
    var extractsInline: Bool { inner.extractsInline }
    func accepts(_ input: ExtractionInput) -> Bool { inner.accepts(input) }
    func extract(_ input: ExtractionInput) throws -> ExtractedText {
        labels.withLock { $0.append(BlockingExecutor.currentLabel) }
        return try inner.extract(input)
    }
}

@Suite struct ExtractionDeadlineTests {
    @Test func aHungExtractionFailsItsDocumentAtTheDeadlineAndTheRunGoesOn() async throws {
        // The deadline must be one the healthy documents cannot reach on a loaded machine (2 s for a
        // few bytes); the hung call blocks until the test releases it, so "the run did not wait for it"
        // does not depend on how long the run took.
        var harness = try PipelineHarness {
            $0.extract.parallelism = 2
            $0.extract.timeoutSeconds = 2
        }
        defer { harness.cleanUp() }
        let extractor = HangingExtractor()
        defer { extractor.release() }
        harness.extractors = .init(extractors: [extractor])
        try "fine".write(to: harness.source.appendingPathComponent("a.txt"), atomically: true, encoding: .utf8)
        try "hang forever".write(
            to: harness.source.appendingPathComponent("hang.txt"),
            atomically: true,
            encoding: .utf8
        )
        try "also fine".write(to: harness.source.appendingPathComponent("z.txt"), atomically: true, encoding: .utf8)
        let stats = try await harness.run()
        // The run ended while the hung call was still blocking its thread: it did not wait for it.
        #expect(extractor.hangsFinished.load(ordering: .relaxed) == 0)
        #expect(stats.documentsUpserted == 2)
        #expect(stats.documentsFailed == 1)
        #expect(stats.failuresByCode["timeout"] == 1)
    }
}

/// Blocks on documents whose text says "hang", like a C library stuck on a malicious file, until
/// ``release()``.
final class HangingExtractor: Extractor {
    let hangsFinished = Atomic<Int>(0)
    private let gate = DispatchSemaphore(value: 0)
    var name: String { "hanging" }
    func accepts(_ input: ExtractionInput) -> Bool { true }
    func extract(_ input: ExtractionInput) throws -> ExtractedText {
        let text = String(decoding: input.bytes, as: UTF8.self)
        if text.contains("hang") {
            gate.wait()
            gate.signal()  // every later hang passes too
            hangsFinished.add(1, ordering: .relaxed)
        }
        return ExtractedText(sections: [TextSection(text: text)])
    }

    /// Lets every hung call return.
    func release() { gate.signal() }
}
