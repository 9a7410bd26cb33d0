#if os(Linux)
import Foundation
import Glibc
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// A search that reads more of the store than the memory releaser's budget (the exact scan, an `ivf` query's
/// lists) copies the large values it scans from the file instead of mapping them: it neither grows the
/// process's resident set nor makes the releaser drop and re-fault the map (issue 33; docs/LOCAL_INDEX.md,
/// "At a million"). Counted in the scanning thread's page faults, which do not depend on timing.
@Suite struct LocalSinkLargeSearchTests {
    static let dimensions = 384

    /// Minor page faults of the calling thread so far.
    static func threadFaults() -> Int {
        var usage = rusage()
        getrusage(1, &usage)  // RUSAGE_THREAD (a GNU extension Swift does not import)
        return usage.ru_minflt
    }

    /// `count` records of about 3 KB each (a 384-dimension vector and a long text), so each sits on its own page.
    static func records(_ count: Int) -> [VectorRecord] {
        (0..<count).map { n in
            VectorRecord(
                id: VectorID(rawValue: String(format: "v%06d", n)),
                documentKey: "doc-\(n / 10).txt",
                ordinal: n % 10,
                text: String(repeating: "water gate \(n) ", count: 60),
                vector: (0..<dimensions).map { sin(Float(n &* 7_919 &+ $0 &* 104_729)) },
                metadata: [:]
            )
        }
    }

    @Test("an exact scan of a store 10 times the releaser's budget maps none of the records' pages")
    func exactScanMapsNoRecordPage() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-large-search-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { TemporaryDirectory.remove(folder) }
        var section = PipelineConfiguration.Sink()
        section.localIndex = .exact
        let sink = try LocalSink(directory: folder, index: .init(section: section))
        try await sink.prepare(embedder: EmbedderIdentity(provider: "t", model: "m", dimensions: Self.dimensions))
        let records = Self.records(12_000)  // about 40 MB
        for start in stride(from: 0, to: records.count, by: 2_000) {
            try await sink.upsert(Array(records[start..<start + 2_000]))
        }
        let query = records[4_321].vector
        // Synchronous, so one thread does the whole scan and its faults are the scan's.
        let before = Self.threadFaults()
        let hits = try LocalSink.exactSearch(environment: sink.environment, query, k: 10, filter: nil)
        let faults = Self.threadFaults() - before
        #expect(hits.first?.record.id == records[4_321].id)
        #expect(hits.count == 10)
        // The keys' leaf pages (about 100) and the few records decoded; read through the map, each record's
        // page faults (at most 16 a fault: at least 750 faults for 12,000 records).
        #expect(faults < 300, "an exact scan of 12,000 records faulted \(faults) times")
    }
}
#endif
