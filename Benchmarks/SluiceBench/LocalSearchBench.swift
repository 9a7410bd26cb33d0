import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting
import Synchronization

/// Search latency of the local store: the exact scan beside the HNSW graph at several search breadths
/// (`ef_search`), one query at a time and `--concurrency` at once, with recall@k of the graph against the
/// scan, the graph's memory and its build cost per vector.
///
/// Vectors are unit vectors in Gaussian clusters (`ClusteredVectors`): uniform random vectors in 384
/// dimensions are all nearly orthogonal, which says nothing about recall on embeddings. Queries come
/// from the same clusters and are not in the store.
struct LocalSearchBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local-search",
        abstract: "Local store search latency: exact scan vs. HNSW, p50/p99, recall@k, index memory and build cost."
    )

    @Option(help: "Vectors in the store.") var vectors = 100_000
    @Option(help: "Dimensions.") var dimensions = 384
    @Option(help: "Clusters (default: one per 100 vectors).") var clusters: Int?
    @Option(help: "Noise norm around a cluster centre (1.0: cosine ~0.5 within a cluster).") var spread: Float = 1.0
    @Option(help: "Queries per measurement.") var queries = 200
    @Option(help: "Top k.") var k = 10
    @Option(help: "Concurrent queries in the concurrent measurement.") var concurrency = 8
    @Option(help: "hnsw m.") var m = 16
    @Option(help: "hnsw ef_construction.") var efConstruction = 100
    @Option(
        help:
            "Where the graph's nodes live (sink.hnsw.nodes): memory (hnswlib) or file (read with pread, ranked by in-memory codes)."
    )
    var nodes: String = "memory"
    @Option(help: "With --nodes file: code bytes a vector (0: no codes, every scored node read).")
    var codeBytes: Int?
    @Option(help: "With --nodes file: labels at which the codes are trained (default 16,384, bounded by the budget).")
    var codesFrom: Int?
    @Option(
        help:
            "With --nodes file: bytes of records held in memory while they fit (default 8 MB; 0 with --codes-from 4096: session 34's graph)."
    )
    var residentBytes: Int?
    @Option(
        parsing: .upToNextOption,
        help: "hnsw ef_search values to measure; 0 is `auto`, the default (the breadth chosen by the store's size)."
    )
    var efSearch = [32, 64, 128, 0]
    @Option(help: "Queries of the exact scan (slow at 1M; recall is measured on these).") var exactQueries: Int?
    @Option(
        help:
            "Take the vectors from this local store (real embeddings) instead of generating them; --queries of them, picked at random, are held out as queries."
    )
    var fromStore: String?
    @Option(
        help:
            "Bytes of text a record carries (0: a short sentence, the records sitting in their leaf pages; real chunks of 1–4 KB sit on pages of their own, as 2000 makes them). Applies when the store is loaded: a reused --store keeps its records."
    )
    var textBytes = 0
    @Option(help: "Store folder to create, or to reuse when it holds the same vectors (default: temporary).")
    var store: String?
    @Option(
        parsing: .upToNextOption,
        help:
            "Filters to measure (records carry `offset` = 10 × their number: `offset < 100000` keeps the first 10,000): the store's filtered search beside the scan of every record."
    )
    var filter: [String] = []
    @Option(
        help:
            "Treat this metadata field as access control's (records carry `readers` = [\"team-N\"], N their number modulo 10: `readers in (team-0, team-1)` keeps a fifth): filters restricting it read only the records they allow (a table of each label's readers, made at the first such search and timed apart)."
    )
    var accessField: String?
    @Option(
        help:
            "With N > 0, each record's `readers` also names one of N users (`user-M`, M its number modulo N), so the store holds about N distinct readers lists, as when documents belong to people: `readers in (team-0, team-1)` still keeps a fifth. 0: the ten team lists alone. Applies when the store is loaded: a reused --store keeps its records."
    )
    var readerLists = 0
    @Flag(
        help:
            "Also time keyword searches (`chunk N corpus`, N a record's number: every record holds two of the words, one record the number) under each --filter beside the same unfiltered, and the records their walks read, then a rare term alone (`N`); a filter restricting --access-field ranks among the records it allows (a table of each record's readers, made at the first such search and timed apart)."
    )
    var keyword = false

    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    func run() async throws {
        let folder =
            store.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sluice-local-search-\(getpid())")
        defer { if store == nil { try? FileManager.default.removeItem(at: folder) } }
        // The exact store is closed (its LMDB environment with it) before the graph's store opens.
        let (queryVectors, truth, exactLines, count) = try await loadAndScan(folder)
        try await measureGraph(folder, count, queryVectors, truth, exactLines)
    }

    /// Loads the vectors (LMDB only, the exact kind), and measures the exact scan.
    func loadAndScan(_ folder: URL) async throws -> ([[Float]], [[SearchHit]], [String], Int) {
        if let fromStore { return try await loadRealAndScan(folder, URL(fileURLWithPath: fromStore)) }
        var generator = ClusteredVectors(
            dimensions: dimensions,
            clusters: clusters ?? max(10, vectors / 100),
            spread: spread,
            seed: 0x10CA_15EA
        )
        let identity = EmbedderIdentity(provider: "bench", model: "clustered", dimensions: dimensions)
        Self.say(
            "\(vectors) vectors × \(dimensions) dimensions in \(clusters ?? max(10, vectors / 100)) clusters "
                + "(spread \(spread)), k \(k), \(queries) queries, hnsw m \(m) ef_construction \(efConstruction), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        // Load with the exact kind (LMDB only), then time the graph's build from LMDB alone.
        var settings = PipelineConfiguration.Sink()
        settings.localIndex = .exact
        let loader = try LocalSink(directory: folder, index: .init(section: settings))
        try await loader.prepare(embedder: identity)
        let existing = try await loader.count()
        let clock = ContinuousClock()
        if existing != vectors {
            try await loader.removeAll()
            try await loader.prepare(embedder: identity)
            let start = clock.now
            for first in stride(from: 0, to: vectors, by: 2000) {
                let count = min(2000, vectors - first)
                try await loader.upsert(
                    Self.records(generator.next(count), from: first, textBytes: textBytes, readerLists: readerLists)
                )
            }
            Self.say("loaded LMDB in \(f(Self.seconds(start.duration(to: clock.now)), 1)) s")
        } else {
            _ = generator.next(vectors)  // the same queries as the run that built it
            Self.say("reusing the \(existing) vectors in \(folder.path)")
        }
        return try await scan(loader, generator.next(queries), count: vectors)
    }

    /// The vectors of another local store, `queries` of them held out as queries.
    func loadRealAndScan(_ folder: URL, _ source: URL) async throws -> ([[Float]], [[SearchHit]], [String], Int) {
        var settings = PipelineConfiguration.Sink()
        settings.localIndex = .exact
        let all = Mutex([[Float]]())
        let original = try LocalSink(directory: source, readOnly: true, index: .init(section: settings))
        try await original.exportAll { record in all.withLock { $0.append(record.vector) } }
        var rng = SplitMix64(seed: 0x4EA1)
        let shuffled = all.withLock { $0 }.shuffled(using: &rng)
        let stored = Array(shuffled.dropFirst(queries))
        Self.say(
            "\(stored.count) vectors × \(shuffled.first?.count ?? 0) dimensions from \(source.path), k \(k), "
                + "\(queries) held-out queries, hnsw m \(m) ef_construction \(efConstruction), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        try? FileManager.default.removeItem(at: folder)
        let loader = try LocalSink(directory: folder, index: .init(section: settings))
        let identity = EmbedderIdentity(provider: "bench", model: "real", dimensions: shuffled.first?.count ?? 0)
        try await loader.prepare(embedder: identity)
        for first in stride(from: 0, to: stored.count, by: 2000) {
            try await loader.upsert(
                Self.records(
                    Array(stored[first..<min(first + 2000, stored.count)]),
                    from: first,
                    textBytes: textBytes,
                    readerLists: readerLists
                )
            )
        }
        return try await scan(loader, Array(shuffled.prefix(queries)), count: stored.count)
    }

    /// The exact scan's latencies and answers (the truth for recall).
    func scan(
        _ loader: LocalSink,
        _ queryVectors: [[Float]],
        count: Int
    ) async throws -> (
        [[Float]], [[SearchHit]], [String], Int
    ) {
        let exactCount = min(exactQueries ?? queries, queries)
        let exactVectors = Array(queryVectors.prefix(exactCount))
        var lines: [String] = []
        // The scan through the store's own search (its reader threads), before the graph exists.
        let (exactSingle, truth) = try await Self.single(exactVectors) { try await loader.search($0, k: k) }
        let exactConcurrent = try await Self.concurrent(exactVectors, concurrency) { try await loader.search($0, k: k) }
        lines.append(Self.row("exact scan", exactCount, exactSingle, exactConcurrent, recall: 1))
        return (queryVectors, truth, lines, count)
    }

    /// Builds the graph from LMDB, then measures searches through it at each `ef_search`.
    func measureGraph(
        _ folder: URL,
        _ vectors: Int,
        _ queryVectors: [[Float]],
        _ truth: [[SearchHit]],
        _ exactLines: [String]
    )
        async throws
    {
        var settings = PipelineConfiguration.Sink()
        settings.hnsw.m = m
        settings.hnsw.efConstruction = efConstruction
        settings.hnsw.exactBelow = 0
        guard let kind = PipelineConfiguration.Sink.HNSW.Nodes(rawValue: nodes) else {
            throw ValidationError("--nodes is memory or file")
        }
        settings.hnsw.nodes = kind
        var indexSettings = LocalSink.IndexSettings(section: settings)
        if let codeBytes { indexSettings.fileCodeBytes = codeBytes }
        if let codesFrom { indexSettings.fileCodesFrom = codesFrom }
        if let residentBytes { indexSettings.fileResidentBytes = residentBytes }
        indexSettings.accessField = accessField
        let sink = try LocalSink(directory: folder, index: indexSettings)
        let clock = ContinuousClock()
        let residentBefore = Self.residentMB()
        let start = clock.now
        let cpuBefore = Self.processCPU()
        try sink.rebuildIndex()
        let build = Self.seconds(start.duration(to: clock.now))
        let buildCPU = Self.processCPU() - cpuBefore
        let memory = Double(sink.indexMemoryBytes ?? 0) / 1_048_576
        let file = (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.first {
            $0.hasPrefix("hnsw-") || $0.hasPrefix("graph-")
        }
        let fileMB =
            file.flatMap {
                try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent($0).path)[.size]
                    as? Int
            }.map { Double($0) / 1_048_576 } ?? 0
        Self.say(
            "hnsw build (nodes: \(nodes)): \(f(build, 1)) s, \(f(build / Double(vectors) * 1e6, 0)) µs/vector, "
                + "\(f(buildCPU / Double(vectors) * 1e6, 0)) µs of CPU a vector "
                + "(\(ProcessInfo.processInfo.activeProcessorCount) threads, LMDB read and labels included); "
                + "index \(f(memory, 0)) MB in memory (RSS +\(f(Self.residentMB() - residentBefore, 0)) MB), "
                + "\(f(fileMB, 0)) MB on disk"
        )
        Self.say("")
        Self.say(
            "search            queries  1 at a time p50/p99 ms  \(concurrency) at once p50/p99 ms   queries/s  recall@\(k)"
                + "  CPU ms a query (1 at a time)"
        )
        for line in exactLines { Self.say(line) }
        for setting in efSearch {
            let ef =
                setting == 0
                ? sink.autoSearchBreadth(vectors: vectors)
                    ?? indexSettings.searchBreadth(vectors: vectors, codesTrained: false) : setting
            sink.setSearchBreadth(ef)
            let (single, found) = try await Self.single(queryVectors) { try await sink.search($0, k: k) }
            let concurrent = try await Self.concurrent(queryVectors, concurrency) { try await sink.search($0, k: k) }
            var recall = 0.0
            for (index, exact) in truth.enumerated() {
                let expected = Set(exact.map(\.record.id))
                recall +=
                    Double(expected.intersection(found[index].map(\.record.id)).count) / Double(max(1, expected.count))
            }
            Self.say(
                Self.row(
                    setting == 0 ? "hnsw ef auto (\(ef))" : "hnsw ef \(ef)",
                    queryVectors.count,
                    single,
                    concurrent,
                    recall: recall / Double(max(1, truth.count))
                )
            )
        }
        if !filter.isEmpty { try await measureFilters(sink, queryVectors) }
        if keyword && !filter.isEmpty { try await measureKeywordFilters(sink, count: vectors) }
    }

    /// Each `--filter` on keyword searches, beside the same searches unfiltered, alternated query by query.
    func measureKeywordFilters(_ sink: LocalSink, count: Int) async throws {
        var random = SplitMix64(seed: 0x4B57)
        let texts = (0..<queries).map { _ in "chunk \(random.next() % UInt64(max(1, count))) corpus" }
        Self.say("")
        Self.say(
            "keyword, filter (k \(k))             filtered p50/p99 ms   unfiltered p50/p99 ms   records read (filtered / unfiltered)"
        )
        var tableMade = false
        for text in filter {
            let parsed = try SearchFilter(parsing: text)
            let clock = ContinuousClock()
            if let accessField, !tableMade, parsed.fields.contains(accessField) {
                // The first restricted keyword search makes the table of each record's readers: a pass over them.
                let begin = clock.now
                _ = try await sink.search(SearchRequest(mode: .keyword, text: texts[0], k: k, filter: parsed))
                Self.say(
                    "the first keyword search restricting \(accessField) (the table of readers made): "
                        + "\(f(Self.seconds(begin.duration(to: clock.now)) * 1000, 1)) ms"
                )
                tableMade = true
            }
            var filtered: [Double] = []
            var unfiltered: [Double] = []
            var read = (filtered: 0, unfiltered: 0)
            for query in texts {
                var before = sink.keywordRecordsRead
                var begin = clock.now
                _ = try await sink.search(SearchRequest(mode: .keyword, text: query, k: k, filter: parsed))
                filtered.append(Self.seconds(begin.duration(to: clock.now)) * 1000)
                read.filtered += sink.keywordRecordsRead - before
                before = sink.keywordRecordsRead
                begin = clock.now
                _ = try await sink.search(SearchRequest(mode: .keyword, text: query, k: k))
                unfiltered.append(Self.seconds(begin.duration(to: clock.now)) * 1000)
                read.unfiltered += sink.keywordRecordsRead - before
            }
            let a = Latencies(milliseconds: filtered, wall: 0)
            let b = Latencies(milliseconds: unfiltered, wall: 0)
            Self.say(
                text.padding(toLength: 36, withPad: " ", startingAt: 0)
                    + String(
                        format: "%9.2f / %-9.2f  %10.2f / %-9.2f  %8.1f / %.1f",
                        a.percentile(0.5),
                        a.percentile(0.99),
                        b.percentile(0.5),
                        b.percentile(0.99),
                        Double(read.filtered) / Double(texts.count),
                        Double(read.unfiltered) / Double(texts.count)
                    )
            )
        }
        // A rare term alone (a record's number: one posting, in a block it shares with other terms of its
        // segment), unfiltered: what a search pays for the look-ups themselves, one block a segment.
        var rare: [Double] = []
        let clock = ContinuousClock()
        for query in texts.map({ $0.split(separator: " ")[1] }) {
            let begin = clock.now
            _ = try await sink.search(SearchRequest(mode: .keyword, text: String(query), k: k))
            rare.append(Self.seconds(begin.duration(to: clock.now)) * 1000)
        }
        let latencies = Latencies(milliseconds: rare, wall: 0)
        Self.say(
            "a rare term alone (`N`), unfiltered: p50 / p99 "
                + String(format: "%.3f / %.3f ms", latencies.percentile(0.5), latencies.percentile(0.99))
        )
    }

    /// Each `--filter`: the store's filtered search (the graph's bounds, or its scan past the read budget) beside
    /// the scan of every record, one query at a time, the same queries alternated; the answers compared.
    func measureFilters(_ sink: LocalSink, _ queryVectors: [[Float]]) async throws {
        Self.say("")
        Self.say(
            "filter (k \(k))                      store p50/p99 ms   scan p50/p99 ms   scan/store p50  same answers  records read  scanned"
        )
        var tableMade = false
        for text in filter {
            let parsed = try SearchFilter(parsing: text)
            if let accessField, !tableMade, parsed.fields.contains(accessField), let query = queryVectors.first {
                // The first restricted search makes the table of each label's readers: a pass over the records.
                let clock = ContinuousClock()
                let begin = clock.now
                _ = try await sink.search(SearchRequest(vector: query, k: k, filter: parsed))
                Self.say(
                    "the first search restricting \(accessField) (the table of readers made): "
                        + "\(f(Self.seconds(begin.duration(to: clock.now)) * 1000, 1)) ms"
                )
                tableMade = true
            }
            var store: [Double] = []
            var scan: [Double] = []
            var same = 0
            let before = sink.filteredSearchTally
            let clock = ContinuousClock()
            for query in queryVectors {
                let request = SearchRequest(vector: query, k: k, filter: parsed)
                var begin = clock.now
                let found = try await sink.search(request)
                store.append(Self.seconds(begin.duration(to: clock.now)) * 1000)
                begin = clock.now
                let scanned = try sink.scanSearch(query, k: k, filter: parsed)
                scan.append(Self.seconds(begin.duration(to: clock.now)) * 1000)
                if found.map(\.record.id) == scanned.map(\.record.id) { same += 1 }
            }
            let after = sink.filteredSearchTally
            let bounded = after.bounded - before.bounded
            let storeTimes = Latencies(milliseconds: store, wall: 0)
            let scanTimes = Latencies(milliseconds: scan, wall: 0)
            Self.say(
                text.padding(toLength: 36, withPad: " ", startingAt: 0)
                    + String(
                        format: "%8.2f / %-8.2f  %7.2f / %-8.2f  %12.1f×  %5d / %-5d  %12.0f  %7d",
                        storeTimes.percentile(0.5),
                        storeTimes.percentile(0.99),
                        scanTimes.percentile(0.5),
                        scanTimes.percentile(0.99),
                        scanTimes.percentile(0.5) / max(storeTimes.percentile(0.5), 1e-9),
                        same,
                        queryVectors.count,
                        Double(after.recordsRead - before.recordsRead) / Double(max(1, bounded)),
                        after.scanned - before.scanned
                    )
            )
        }
    }

    struct Latencies {
        var milliseconds: [Double]
        var wall: Double
        /// The process's CPU seconds over the measurement (every thread: the caller's, the store's readers').
        var cpu: Double = 0
        func percentile(_ p: Double) -> Double {
            let sorted = milliseconds.sorted()
            guard !sorted.isEmpty else { return 0 }
            return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
    }

    /// One query after the other (on the store's reader threads, as `search` runs them).
    static func single(
        _ queries: [[Float]],
        _ search: @escaping @Sendable ([Float]) async throws -> [SearchHit]
    ) async throws -> (Latencies, [[SearchHit]]) {
        let clock = ContinuousClock()
        var times: [Double] = []
        var results: [[SearchHit]] = []
        let start = clock.now
        let cpuBefore = processCPU()
        for query in queries {
            let begin = clock.now
            results.append(try await search(query))
            times.append(seconds(begin.duration(to: clock.now)) * 1000)
        }
        let latencies = Latencies(
            milliseconds: times,
            wall: seconds(start.duration(to: clock.now)),
            cpu: processCPU() - cpuBefore
        )
        return (latencies, results)
    }

    /// `concurrency` clients, each sending its next query when the last one is answered.
    static func concurrent(
        _ queries: [[Float]],
        _ concurrency: Int,
        _ search: @escaping @Sendable ([Float]) async throws -> [SearchHit]
    ) async throws -> Latencies {
        let clock = ContinuousClock()
        let next = Counter()
        let start = clock.now
        let times = try await withThrowingTaskGroup(of: [Double].self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var mine: [Double] = []
                    while let index = next.take(below: queries.count) {
                        let begin = clock.now
                        _ = try await search(queries[index])
                        mine.append(seconds(begin.duration(to: clock.now)) * 1000)
                    }
                    return mine
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return Latencies(milliseconds: times, wall: seconds(start.duration(to: clock.now)))
    }

    static func row(
        _ name: String,
        _ count: Int,
        _ single: Latencies,
        _ concurrent: Latencies,
        recall: Double
    )
        -> String
    {

        name.padding(toLength: 18, withPad: " ", startingAt: 0)
            + String(
                format: "%7d  %10.2f / %-10.2f  %9.2f / %-10.2f  %9.0f  %.3f      %.3f",
                count,
                single.percentile(0.5),
                single.percentile(0.99),
                concurrent.percentile(0.5),
                concurrent.percentile(0.99),
                Double(count) / max(concurrent.wall, 1e-9),
                recall,
                single.cpu * 1000 / Double(max(1, count))
            )
    }

    /// The records of `vectors`, numbered from `first`; each text a sentence, repeated to `textBytes` when that is
    /// longer; with `readerLists` above 0, each record's readers name a user as well as a team.
    static func records(
        _ vectors: [[Float]],
        from first: Int,
        textBytes: Int = 0,
        readerLists: Int = 0
    ) -> [VectorRecord] {
        vectors.enumerated().map { offset, vector in
            let n = first + offset
            let key = "docs/file-\(n / 50).txt"
            let sentence = "chunk \(n) of the clustered benchmark corpus, about as long as a short sentence"
            var text = sentence
            while text.utf8.count < textBytes { text += " " + sentence }
            return VectorRecord(
                id: VectorID(rawValue: String(format: "%016x", n)),
                documentKey: key,
                ordinal: n % 50,
                text: text,
                vector: vector,
                metadata: [
                    "offset": .int(n * 10),
                    "readers": .strings(["team-\(n % 10)"] + (readerLists > 0 ? ["user-\(n % readerLists)"] : [])),
                ]
            )
        }
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The process's CPU time (user and system), in seconds.
    static func processCPU() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    static func residentMB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Double(line.split(separator: " ").dropFirst().first.flatMap { Double($0) } ?? 0) / 1024
    }
}
