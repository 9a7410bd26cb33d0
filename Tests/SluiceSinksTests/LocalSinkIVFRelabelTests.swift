import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A store written with `exact` (records without labels, labels naming deleted records) opened with `ivf`:
/// the trainer gives every record a label in bounded commits, between which the writer writes, before it
/// trains. The trainer is held after each of those commits (events, never timing).
///
/// The holds are set before the store is prepared: `prepare` already asks the trainer for a job (the store
/// holds more than `exact_below` records), so holds set after it raced the trainer. Under load the trainer won,
/// relabelled and trained unheld, and the test waited for a hold that never came (seen 2026-11-30: hung in the
/// whole suite and in `--filter 'LocalSink|Keyword'`; with the trainer's `.ended` step it failed instead).
@Suite
struct LocalSinkIVFRelabelTests {
    static let dimensions = LocalSinkIVFTests.dimensions

    @Test(
        "relabelling a store written with exact takes bounded commits; writes, replaces and deletes go on between them"
    )
    func relabelInParts() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 8, seed: 0xB64)
        do {
            // Labelled by `ivf` below exact_below, then written with `exact`: new records without labels, and
            // deleted ones whose labels stay.
            let labelled = try LocalSinkIVFTests.open(folder, exactBelow: 1_000)
            try await LocalSinkIVFTests.prepare(labelled, dimensions: Self.dimensions)
            try await labelled.upsert(LocalSinkIVFTests.records(generator.next(50)))
            try await labelled.finish()
            let exact = try LocalSinkIVFTests.open(folder, kind: .exact)
            try await LocalSinkIVFTests.prepare(exact, dimensions: Self.dimensions)
            try await exact.upsert(LocalSinkIVFTests.records(generator.next(150), from: 50))
            try await exact.delete((0..<10).map(LocalSinkIVFBackgroundTests.id))
            try await exact.finish()
        }
        let sink = try LocalSinkIVFTests.open(folder, exactBelow: 100, nprobe: 65_536)
        let holds = LocalSinkIVFBackgroundTests.Holds(sink, at: [.relabelPart, .trained])
        // Preparing finds 190 records without the labels mark and asks the trainer, which labels 16 a commit.
        try await LocalSinkIVFTests.prepare(sink, dimensions: Self.dimensions)
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 200))
        var step = await holds.next()
        #expect(step == .relabelPart, "the relabelling commits in parts")
        guard step == .relabelPart else {
            holds.release(holding: false)
            try await sink.waitForIVFTraining()
            return
        }
        // Between two of its commits: new records, replaced ones (labelled already or not yet), deleted ones.
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(10), from: 300))
        var replaced: [Int: [Float]] = [:]
        for n in [10, 11, 190, 191] { replaced[n] = generator.next() }
        try await sink.upsert(replaced.keys.sorted().map { LocalSinkIVFTests.records([replaced[$0]!], from: $0)[0] })
        let deleted = [12, 13, 195, 196]
        try await sink.delete(deleted.map(LocalSinkIVFBackgroundTests.id))
        for query in generator.next(3) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
        var parts = 1
        while step == .relabelPart {
            holds.release()
            step = await holds.next()
            if step == .relabelPart { parts += 1 }
        }
        #expect(step == .trained)
        #expect(parts >= 190 / 16 - 1, "\(parts) commits for 190 records, 16 a commit")
        holds.release(holding: false)
        try await sink.waitForIVFTraining()
        let problems = try sink.ivfProblems()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        let count = try await sink.count()
        #expect(count == 190 + 1 + 10 - deleted.count)
        #expect(try sink.ivfDetails()["ivf_entries"] == String(count), "one list entry a record")
        for (n, vector) in replaced {
            #expect(try await sink.search(vector, k: 1).first?.record.id == LocalSinkIVFBackgroundTests.id(n))
        }
        for query in generator.next(5) {
            #expect(try await sink.search(query, k: 10) == (try sink.exactSearch(query, k: 10)))
        }
    }

    @Test("a write that drops the labels between two relabel commits makes the next job label from the first record")
    func droppedLabelsRestart() async throws {
        let folder = LocalSinkIVFTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 8, seed: 0xB65)
        do {
            let exact = try LocalSinkIVFTests.open(folder, kind: .exact)
            try await LocalSinkIVFTests.prepare(exact, dimensions: Self.dimensions)
            try await exact.upsert(LocalSinkIVFTests.records(generator.next(120)))
            try await exact.finish()
        }
        let sink = try LocalSinkIVFTests.open(folder, exactBelow: 100, nprobe: 65_536)
        let holds = LocalSinkIVFBackgroundTests.Holds(sink, at: [.relabelPart])
        try await LocalSinkIVFTests.prepare(sink, dimensions: Self.dimensions)  // asks the trainer for a job
        try await sink.upsert(LocalSinkIVFTests.records(generator.next(1), from: 120))
        #expect(await holds.next() == .relabelPart)
        // What a write with `exact` does to the IVF index in its transaction (another process's, say).
        try sink.environment.write { try sink.ivfInvalidate(keepingLabels: false, $0) }
        let ivf = try sink.environment.database(LocalIVFLayout.database)
        #expect(try sink.environment.read { try $0.get(ivf, LocalIVFLayout.relabelling) } == nil)
        holds.release(holding: false)
        // The job stops without training; the one asked for again (or the next) labels from the first record.
        try await LocalSinkIVFTests.train(sink)
        #expect(try LocalSinkIVFTests.current(sink) != nil)
        let problems = try sink.ivfProblems()
        #expect(problems.isEmpty, "\(problems.prefix(5))")
        #expect(try sink.ivfDetails()["ivf_entries"] == String(try await sink.count()))
    }
}
