import Foundation
import SluiceCore
import SluiceTesting
import Synchronization
import Testing

@testable import SluiceSinks

/// ``LocalANNIndex`` with its nodes in a file (`sink.hnsw.nodes: file`, `CHNSW`'s `sluice_fgraph_*`): recall
/// against an exact scan with and without the product-quantized codes, the codes' training, deletes, replaces,
/// save and load, the saved file never written again, damaged and older files refused, and no file left behind
/// by a graph freed unsaved. Behaviour only, never timing. The graphs here train their codes at 500 labels (the
/// store: about 16,000 at 384 d), so every test but the untrained recall runs with codes choosing the path, and
/// hold no records in memory beyond session 34's first ones until the training (a resident budget of 0; the
/// store's 8 MB would hold all of these graphs: `LocalANNIndexFileNodesResidentTests`), so they read the file.
@Suite struct LocalANNIndexFileNodesTests {
    static let dimensions = 48

    static func settings(
        m: Int = 16,
        efConstruction: Int = 100,
        codeBytes: Int = 24,
        codesFrom: Int = 500,
        residentBytes: Int = 0
    ) -> LocalSink.IndexSettings {
        var section = PipelineConfiguration.Sink()
        section.hnsw.nodes = .file
        section.hnsw.m = m
        section.hnsw.efConstruction = efConstruction
        var settings = LocalSink.IndexSettings(section: section)
        settings.fileCodeBytes = codeBytes
        settings.fileCodesFrom = codesFrom
        settings.fileResidentBytes = residentBytes
        return settings
    }

    /// The code bytes a 48-d graph asked for 24 uses: the most whose sub-vectors are a multiple of 4 dimensions.
    static let codeBytes48 = 12

    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-fgraph-\(UInt64.random(in: 0...UInt64.max))"
        )
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func names(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
    }

    static func dot(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }

    /// The exact top `k` labels of `query` among `vectors` (label = place), skipping `skipped`.
    static func exact(_ query: [Float], _ vectors: [[Float]], k: Int, skipping skipped: Set<Int> = []) -> [UInt64] {
        let scores = vectors.map { dot(query, $0) }
        return vectors.indices.filter { !skipped.contains($0) }
            .sorted { scores[$0] > scores[$1] }
            .prefix(k).map { UInt64($0) }
    }

    /// A graph of `vectors` (labels 0, 1, …; their dimensions) added 500 at a time; `folder` nil for the graph in
    /// memory.
    static func filled(
        _ folder: URL?,
        _ vectors: [[Float]],
        settings: LocalSink.IndexSettings = settings(),
        capacity: Int = 1024,
        threads: Int = 2
    ) throws -> LocalANNIndex {
        let index = try LocalANNIndex(
            dimensions: vectors.first?.count ?? dimensions,
            capacity: capacity,
            settings: settings,
            directory: folder
        )
        for start in stride(from: 0, to: vectors.count, by: 500) {
            let part = (start..<min(start + 500, vectors.count)).map { (UInt64($0), vectors[$0]) }
            try index.add(part, threads: threads)
        }
        return index
    }

    @Test(
        "recall@10 against an exact scan is at least 0.95 on clustered vectors at the store's `auto` breadth, with codes choosing the path and without, and the graph says its kind",
        arguments: [0, 24]
    )
    func recallOnClusteredVectors(codeBytes: Int) throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 40, seed: 0xF11E)
        let vectors = generator.next(4000)
        let settings = Self.settings(codeBytes: codeBytes)
        let index = try Self.filled(folder, vectors, settings: settings)
        #expect(index.nodes == .file)
        #expect(index.elementCount == 4000)
        #expect(index.deletedCount == 0)
        #expect(index.codeBytes == (codeBytes == 0 ? 0 : Self.codeBytes48))
        let breadth = settings.searchBreadth(vectors: vectors.count, codesTrained: index.codeBytes > 0)
        #expect(breadth == (codeBytes == 0 ? 64 : 96), "1.5 times memory's 64 once the codes rank the beam")
        var total = 0.0
        let queries = generator.next(100)
        for query in queries {
            let exact = Set(Self.exact(query, vectors, k: 10))
            let found = Set(index.search(query, k: 20, breadth: breadth).prefix(10).map(\.label))
            total += Double(exact.intersection(found).count) / 10
        }
        #expect(total / Double(queries.count) >= 0.95)
        // The memory holds the levels, upper lists, codes and codebooks: far less than the records (4000 × 436
        // bytes).
        #expect(index.memoryBytes < 4000 * 436 / 4, "\(index.memoryBytes) bytes in memory")
    }

    @Test(
        "the codes are trained when the graph reaches codes_from, kept by a save and a load, and a graph saved before training trains after its load"
    )
    func codesTrainedSavedAndLoaded() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 20, seed: 0xC0DE)
        let settings = Self.settings(codesFrom: 700)
        let index = try Self.filled(folder, generator.next(600), settings: settings)
        #expect(index.codeBytes == 0, "600 labels: not yet trained")
        let early = folder.appendingPathComponent("graph-1.nodes")
        try index.save(to: early)
        try index.add((600..<800).map { (UInt64($0), generator.next()) }, threads: 1)
        #expect(index.codeBytes == Self.codeBytes48)

        // A graph saved untrained trains once it reaches codes_from, as recorded in its file.
        let loadedEarly = try LocalANNIndex(loading: early, dimensions: Self.dimensions, settings: settings)
        #expect(loadedEarly.codeBytes == 0)
        try loadedEarly.add((600..<800).map { (UInt64($0), generator.next()) }, threads: 1)
        #expect(loadedEarly.codeBytes == Self.codeBytes48)

        let late = folder.appendingPathComponent("graph-2.nodes")
        try index.save(to: late)
        let loaded = try LocalANNIndex(loading: late, dimensions: Self.dimensions, settings: settings)
        #expect(loaded.codeBytes == Self.codeBytes48)
        #expect(loaded.memoryBytes > 800 * Self.codeBytes48)
        let queries = generator.next(20)
        for query in queries {
            let expected = index.search(query, k: 10, breadth: 64).map(\.label)
            #expect(loaded.search(query, k: 10, breadth: 64).map(\.label) == expected)
        }
    }

    @Test(
        "a deleted label is never returned, even when its vector is the query; a replaced label is found by its new vector, not its old one"
    )
    func deletesAndReplaces() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 20, seed: 0xDE1)
        var vectors = generator.next(2000)
        let index = try Self.filled(folder, vectors)
        let deleted = Set(stride(from: 0, to: 2000, by: 7))
        for label in deleted { #expect(try index.markDeleted(UInt64(label))) }
        #expect(try index.markDeleted(0) == false, "already deleted")
        #expect(try index.markDeleted(99_999) == false, "never there")
        #expect(index.deletedCount == deleted.count)
        for label in deleted.sorted().prefix(50) {
            let found = index.search(vectors[label], k: 10, breadth: 64).map(\.label)
            #expect(found.count == 10)
            #expect(!found.contains { deleted.contains(Int($0)) })
        }
        // Replace: live labels and deleted ones (the store re-uses a deleted label's slot).
        var other = ClusteredVectors(dimensions: Self.dimensions, clusters: 5, seed: 0x0E7)
        let replaced = [3, 7, 14, 500, 1001, 1999]
        let old = replaced.map { vectors[$0] }
        let fresh = other.next(replaced.count)
        try index.add(zip(replaced, fresh).map { (UInt64($0), $1) }, threads: 1)
        for (label, vector) in zip(replaced, fresh) { vectors[label] = vector }
        #expect(index.deletedCount == deleted.subtracting(replaced).count)
        #expect(index.elementCount == 2000)
        for (label, vector) in zip(replaced, fresh) {
            #expect(index.search(vector, k: 1, breadth: 64).first?.label == UInt64(label))
        }
        for (label, vector) in zip(replaced, old) {
            let found = index.search(vector, k: 1, breadth: 64)
            #expect(found.first?.label != UInt64(label), "found by its old vector")
        }
    }

    @Test(
        "searches keep their scratches for the next ones: concurrent searches answer as one at a time, the memory counted grows by at most four kept scratches, and a graph grown past a kept scratch finds its new labels and answers as its saved copy loaded"
    )
    func keptSearchScratches() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 20, seed: 0x5C7A)
        var vectors = generator.next(1000)
        let index = try Self.filled(folder, vectors)
        #expect(index.codeBytes == Self.codeBytes48)
        let before = index.memoryBytes
        let queries = generator.next(16)
        let expected = queries.map { index.search($0, k: 10, breadth: 128).map(\.label) }
        let kept = index.memoryBytes
        #expect(kept > before, "a scratch kept")
        let answers = Mutex([[UInt64]](repeating: [], count: 64))
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            let found = index.search(queries[i % queries.count], k: 10, breadth: 128).map(\.label)
            answers.withLock { $0[i] = found }
        }
        for (i, found) in answers.withLock({ $0 }).enumerated() { #expect(found == expected[i % queries.count]) }
        #expect(index.memoryBytes - before <= 4 << 20, "at most 4 scratches of at most 1 MB")

        // Labels past the slots the kept scratches were sized for (1,000 then; 4,000 now).
        let more = generator.next(3000)
        vectors += more
        for start in stride(from: 1000, to: 4000, by: 500) {
            try index.add((start..<start + 500).map { (UInt64($0), vectors[$0]) }, threads: 1)
        }
        for label in stride(from: 1000, to: 4000, by: 37) {
            #expect(index.search(vectors[label], k: 1, breadth: 128).first?.label == UInt64(label))
        }
        let saved = folder.appendingPathComponent("graph-1.nodes")
        try index.save(to: saved)
        let loaded = try LocalANNIndex(loading: saved, dimensions: Self.dimensions, settings: Self.settings())
        for query in generator.next(20) {
            let expected = loaded.search(query, k: 10, breadth: 128).map(\.label)
            #expect(index.search(query, k: 10, breadth: 128).map(\.label) == expected)
        }
    }

    @Test("save, then load: the same answers; writes after the save leave the saved file's bytes as they were")
    func saveLoadAndWritesAfterSave() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 20, seed: 0x5A7E)
        let vectors = generator.next(1500)
        let index = try Self.filled(folder, vectors)
        for label in stride(from: 1, to: 1500, by: 11) { try index.markDeleted(UInt64(label)) }
        let file = folder.appendingPathComponent("graph-1.nodes")
        try index.save(to: file)
        let saved = try Data(contentsOf: file)
        let queries = generator.next(30)
        let before = queries.map { index.search($0, k: 10, breadth: 48).map(\.label) }

        let loaded = try LocalANNIndex(loading: file, dimensions: Self.dimensions, settings: Self.settings())
        #expect(loaded.nodes == .file)
        #expect(loaded.elementCount == index.elementCount)
        #expect(loaded.deletedCount == index.deletedCount)
        #expect(loaded.codeBytes == Self.codeBytes48)
        #expect(index.codeBytes == Self.codeBytes48)
        #expect(queries.map { loaded.search($0, k: 10, breadth: 48).map(\.label) } == before)

        // Both graphs write after the save: the named file is neither's working copy any more.
        try index.add(generator.next(200).enumerated().map { (UInt64(1500 + $0.offset), $0.element) }, threads: 1)
        try loaded.add(generator.next(200).enumerated().map { (UInt64(1500 + $0.offset), $0.element) }, threads: 1)
        try loaded.markDeleted(2)
        try index.markDeleted(4)
        #expect(try Data(contentsOf: file) == saved, "the saved file changed")
        #expect(loaded.elementCount == 1700)
        #expect(try Self.names(folder) == ["graph-1.nodes"])
    }

    @Test(
        "a file cut short, with a damaged header or upper section, or made for another dimension is refused with a clear error"
    )
    func damagedFilesAreRefused() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0xBAD)
        let index = try Self.filled(folder, generator.next(600))
        let file = folder.appendingPathComponent("graph-1.nodes")
        try index.save(to: file)
        let good = try Data(contentsOf: file)

        func refusal(_ bytes: Data, dimensions: Int = Self.dimensions) -> String? {
            let damaged = folder.appendingPathComponent("damaged.nodes")
            try? bytes.write(to: damaged)
            defer { try? FileManager.default.removeItem(at: damaged) }
            do {
                _ = try LocalANNIndex(loading: damaged, dimensions: dimensions, settings: Self.settings())
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(refusal(good.prefix(100))?.contains("cut short") == true)
        #expect(refusal(good.prefix(good.count - 10))?.contains("cut short") == true)
        var header = good
        header[40] ^= 0xFF  // inside the counts
        #expect(refusal(header)?.contains("header is damaged") == true)
        var upper = good
        upper[upper.count - 3] ^= 0x01
        #expect(refusal(upper)?.contains("upper section is damaged") == true)
        var magic = good
        magic[0] = 0
        #expect(refusal(magic)?.contains("not a node file") == true)
        #expect(refusal(good, dimensions: 64)?.contains("another dimension") == true)
        // A file of the previous format (version 1: no codes, another header) is refused by its version before
        // anything else, so the store builds the graph again.
        var older = good
        older.replaceSubrange(8..<12, with: [1, 0, 0, 0])
        let message = refusal(older)
        #expect(message?.contains("format version 1, this build reads version 2") == true, "\(message ?? "loaded")")
        #expect(refusal(good) == nil)
    }

    @Test("a graph freed without saving leaves no file in its folder, after writes and after a load and a write")
    func noFileLeftBehind() throws {
        let folder = try Self.folder()
        defer { TemporaryDirectory.remove(folder) }
        var generator = ClusteredVectors(dimensions: Self.dimensions, clusters: 10, seed: 0x1EF7)
        do {
            let index = try Self.filled(folder, generator.next(800))
            #expect(index.elementCount == 800)
            #expect(try Self.names(folder) == [])
            try index.save(to: folder.appendingPathComponent("graph-1.nodes"))
        }
        do {
            let loaded = try LocalANNIndex(
                loading: folder.appendingPathComponent("graph-1.nodes"),
                dimensions: Self.dimensions,
                settings: Self.settings()
            )
            try loaded.add([(900, generator.next())], threads: 1)
            #expect(loaded.elementCount == 801)
        }
        #expect(try Self.names(folder) == ["graph-1.nodes"])
    }
}
