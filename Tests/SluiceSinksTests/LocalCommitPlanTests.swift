import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// How the local store cuts an upsert into commits of a bounded page count (`LocalCommitPlan`), and what
/// a store written in several commits per upsert holds: every record, a graph that followed every commit.
@Suite struct LocalCommitPlanTests {
    /// Documents of these record counts, each record of `bytes` encoded bytes.
    static func layout(_ counts: [Int], bytes: Int = 100) -> (keys: [String], bytes: [Int]) {
        let keys = counts.enumerated().flatMap { document, count in Array(repeating: "doc-\(document)", count: count) }
        return (keys, Array(repeating: bytes, count: keys.count))
    }

    @Test("a record's pages: one leaf, and overflow pages for a value too large for a leaf")
    func pageEstimate() {
        #expect(LocalCommitPlan.pages(valueBytes: 100) == 1)
        #expect(LocalCommitPlan.pages(valueBytes: 2_000) == 1)
        #expect(LocalCommitPlan.pages(valueBytes: 2_001) == 2)
        #expect(LocalCommitPlan.pages(valueBytes: 4_080) == 2)
        #expect(LocalCommitPlan.pages(valueBytes: 4_081) == 3)
    }

    @Test(
        "commits cover the records in order, stay within the budget, and keep a document whole when it fits",
        arguments: [1, 2, 3, 5, 8, 13, 40, 1_000]
    )
    func commitsKeepDocumentsWhole(budget: Int) {
        let (keys, bytes) = Self.layout([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5])
        let commits = LocalCommitPlan.commits(documentKeys: keys, valueBytes: bytes, budget: budget)
        // In order, no gap, no overlap, nothing empty.
        #expect(commits.first?.lowerBound == 0)
        #expect(commits.last?.upperBound == keys.count)
        for (one, next) in zip(commits, commits.dropFirst()) { #expect(one.upperBound == next.lowerBound) }
        #expect(commits.allSatisfy { !$0.isEmpty })
        for commit in commits { #expect(commit.count <= budget || commit.count == 1) }
        // A document of at most `budget` records is in one commit.
        for key in Set(keys) {
            let positions = keys.indices.filter { keys[$0] == key }
            let holding = Set(positions.map { position in commits.firstIndex { $0.contains(position) }! })
            if positions.count <= budget {
                #expect(holding.count == 1, "\(key) of \(positions.count) records split at budget \(budget)")
            } else {
                #expect(holding.count == (positions.count + budget - 1) / budget || holding.count > 1)
            }
        }
        // Greedy: two neighbouring commits could not have been one.
        if budget >= 9 {
            for (one, next) in zip(commits, commits.dropFirst()) { #expect(one.count + next.count > budget) }
        }
    }

    @Test("large records count their overflow pages")
    func largeRecordsFillTheBudgetSooner() {
        let (keys, _) = Self.layout([1, 1, 1, 1, 1, 1])
        let small = LocalCommitPlan.commits(documentKeys: keys, valueBytes: Array(repeating: 100, count: 6), budget: 6)
        let large = LocalCommitPlan.commits(
            documentKeys: keys,
            valueBytes: Array(repeating: 5_000, count: 6),
            budget: 6
        )
        #expect(small == [0..<6])
        #expect(large == [0..<2, 2..<4, 4..<6])  // 3 pages each: a leaf and two overflow pages
    }

    @Test("an upsert over the budget commits in several steps; the store holds every record and the graph follows")
    func splitUpsertIsWholeAndFollowed() async throws {
        let folder = LocalSinkANNTests.folder()
        defer { TemporaryDirectory.remove(folder) }
        var section = PipelineConfiguration.Sink()
        section.hnsw.exactBelow = 0  // the graph answers
        let sink = try LocalSink(directory: folder, index: .init(section: section), commitPages: 25)
        try await LocalSinkANNTests.prepare(sink)
        var generator = ClusteredVectors(dimensions: LocalSinkANNTests.dimensions, clusters: 5, seed: 0xC0A1)
        let records = LocalSinkANNTests.records(generator.next(200))  // 20 documents of 10 records, 1 page each
        let before = try Self.generation(sink)
        try await sink.upsert(records)
        // 2 documents a commit: 10 commits, each counting the store's generation up.
        #expect(try Self.generation(sink) == before + 10)
        #expect(try await sink.count() == 200)
        sink.settleIndex()  // the follower has applied every commit
        #expect(sink.annState.live?.index?.elementCount == 200)
        for query in generator.next(10) {
            let hits = try await sink.search(query, k: 10)
            #expect(Set(hits.map(\.record.id)) == Set(try sink.exactSearch(query, k: 10).map(\.record.id)))
        }
        // Upserting the same records again replaces them (a run killed between two commits does this).
        try await sink.upsert(records)
        #expect(try await sink.count() == 200)
        let keyword = try await sink.search(SearchRequest(mode: .keyword, text: "text 7", k: 3))
        #expect(!keyword.isEmpty)
    }

    static func generation(_ sink: LocalSink) throws -> UInt64 {
        let ann = try sink.environment.database("ann")
        return try sink.environment.read { txn in
            try txn.get(ann, Array("generation".utf8)).map(LocalSink.number) ?? 0
        }
    }
}
