import ArgumentParser
import Foundation
import SluiceCore
import SluiceSinks
import SluiceTesting

/// The local store's IVF index (`sink.local_index: ivf`) measured through Sluice's own code on given
/// vectors: the base is read from a NumPy `.npy` file and written through `LocalSink.upsert`, so the store
/// trains its centroids as it would in a run; then each set of queries (`--queries NAME=FILE.npy`) is
/// searched at each `nprobe`, with recall@k against the store's exact scan (or the exact k-th best scores
/// given with `--truth`), the lists and codes a query
/// scanned (counts: they do not depend on the machine's load), and the latency of one query at a time.
///
/// `--train-at` says when the store trains: by default at the whole base (one training on every vector,
/// as `Benchmarks/ann/ivf_recall.py` trains its "fresh" lists); `--train-at 10000` is the store's default
/// (`sink.ivf.exact_below`), trained at 10,000 and again at each 4× growth while the base loads.
struct LocalIVFBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "local-ivf",
        abstract:
            "The local store's IVF index on vectors from .npy files: recall@k against the exact scan, codes scanned, latency, training stalls."
    )

    @Option(help: "The base: a float32 .npy file of n × d vectors (Benchmarks/ann/split.py writes one).")
    var base: String?
    @Option(
        help:
            "Instead of --base: N clustered vectors, those of `local-search --vectors N` (same generator and seed), with --clustered-queries of its queries (named `clustered`) and their exact answers computed while the base streams by."
    )
    var clustered: Int?
    @Option(help: "With --clustered: dimensions.") var dimensions = 384
    @Option(help: "With --clustered: clusters (default: one per 100 vectors).") var clusters: Int?
    @Option(help: "With --clustered: noise norm around a cluster centre.") var spread: Float = 1.0
    @Option(help: "With --clustered: queries (the vectors that follow the base).") var clusteredQueries = 200
    @Option(help: "Concurrent queries in the concurrent measurement (0: none).") var concurrency = 8
    @Option(
        parsing: .singleValue,
        help: "A set of queries, NAME=FILE.npy (float32, m × d); repeat for several sets, measured apart."
    )
    var queries: [String] = []
    @Option(
        parsing: .singleValue,
        help:
            "The exact k-th best cosine of each query of a set, NAME=FILE.npy (split.py writes them), instead of the store's exact scan (slow in a debug build)."
    )
    var truth: [String] = []
    @Option(help: "Read only the first N vectors of the base.") var limit: Int?
    @Option(help: "Top k.") var k = 10
    @Option(parsing: .upToNextOption, help: "nprobe values to measure; 0 is `auto` (the store's default).")
    var nprobe = [16, 32, 64, 128, 0]
    @Option(help: "sink.ivf.exact_below: the store's size at which it trains (default: the whole base).")
    var trainAt: Int?
    @Option(help: "Vectors an upsert.") var batch = 2000
    @Option(help: "Store folder to create, or to reuse when it holds the same number of vectors (default: temporary).")
    var store: String?

    static func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

    func run() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        // The base: read from a file, or generated a batch at a time (`--clustered`), with the exact answers.
        var stored: [[Float]] = []
        var generator: ClusteredVectors?
        var exact: ExactBest?
        var sets = try queries.map(Self.named)
        var given = Dictionary(try truth.map(Self.named)) { $1 }
        if let clustered {
            let made = Self.clusteredGenerator(clustered, dimensions: dimensions, clusters: clusters, spread: spread)
            let queryVectors = Self.clusteredQueries(made, after: clustered, queries: clusteredQueries)
            (generator, exact) = (made, ExactBest(queries: queryVectors, k: k))
            sets = [("clustered", queryVectors)] + sets
        } else if let base {
            stored = try NumPyMatrix(contentsOf: URL(fileURLWithPath: base)).rows
            if let limit { stored = Array(stored.prefix(limit)) }
        }
        let count = clustered ?? stored.count
        let dimensions = clustered == nil ? (stored.first?.count ?? 0) : dimensions
        guard count > 0, sets.allSatisfy({ $0.1.allSatisfy { $0.count == dimensions } }) else {
            throw ValidationError(
                "no --base or --clustered, or queries of another dimension than the base's \(dimensions)"
            )
        }
        var offset = 0
        func next(_ wanted: Int) -> [[Float]] {
            defer { offset += wanted }
            guard var made = generator else { return Array(stored[offset..<offset + wanted]) }
            let part = made.next(wanted)
            generator = made
            exact?.add(part)
            return part
        }
        Self.say(
            "\(count) vectors × \(dimensions) dimensions "
                + (clustered == nil
                    ? "from \(base ?? "") read"
                    : "in \(clusters ?? max(10, count / 100)) clusters (spread \(spread)), the queries generated")
                + " in \(f(LocalSearchBench.seconds(start.duration(to: clock.now)), 1)) s; queries "
                + sets.map { "\($0.0) \($0.1.count)" }.joined(separator: ", ") + "; k \(k); "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores"
        )
        let folder =
            store.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("sluice-local-ivf-\(getpid())")
        defer { if store == nil { try? FileManager.default.removeItem(at: folder) } }
        var settings = PipelineConfiguration.Sink()
        settings.localIndex = .ivf
        settings.ivf.exactBelow = trainAt ?? count
        let sink = try LocalSink(directory: folder, index: .init(section: settings))
        let identity = EmbedderIdentity(
            provider: "bench",
            model: clustered == nil ? "npy" : "clustered",
            dimensions: dimensions
        )
        try await sink.prepare(embedder: identity)
        if try await sink.count() != count {
            try await sink.removeAll()
            try await sink.prepare(embedder: identity)
            try await load(count, next, into: sink)
        } else {
            Self.say("reusing the \(count) vectors in \(folder.path)")
            for first in stride(from: 0, to: count, by: batch) { _ = next(min(batch, count - first)) }
        }
        if let exact { given["clustered"] = [exact.kth] }
        let details = try await sink.info().details
        Self.say(
            "index: epoch \(details["ivf_epoch"] ?? "?"), \(details["ivf_lists"] ?? "?") lists, trained on "
                + "\(details["ivf_trained_on"] ?? "?") vectors; the store's folder \(f(Double(Self.folderBytes(folder)) / 1_048_576, 0)) MB; "
                + "peak RSS so far \(f(Self.peakResidentMB(), 0)) MB"
        )
        Self.say("")
        Self.say(
            "| queries | search | recall@\(k) | lists a query | codes a query, mean | p99 | share of n | p50 ms | p99 ms |"
                + (concurrency > 0 ? " \(concurrency) at once p50 / p99 ms | queries/s |" : "")
        )
        Self.say("|---|---|---|---|---|---|---|---|---|" + (concurrency > 0 ? "---|---|" : ""))
        for (name, queryVectors) in sets {
            let kth: [Float]
            if let scores = given[name]?.first, scores.count == queryVectors.count {
                kth = scores
            } else {
                // The truth: the store's own exact scan (a filter every record matches makes a search scan).
                let (exact, found) = try await LocalSearchBench.single(queryVectors) {
                    try await sink.search(
                        SearchRequest(vector: $0, k: k, filter: .prefix(SearchFilter.documentKeyField, "docs/"))
                    )
                }
                kth = found.map { $0.last?.score ?? -.infinity }
                Self.say(
                    "| \(name) | exact scan | 1.000 | | \(count) | | 100% | "
                        + "\(f(exact.percentile(0.5), 2)) | \(f(exact.percentile(0.99), 2)) |"
                )
            }
            for setting in nprobe {
                sink.setProbes(setting == 0 ? nil : setting)
                try await measure(name, setting, queryVectors, kth, sink, of: count)
            }
        }
        Self.say("peak RSS at the end (the searches' mapped pages included): \(f(Self.peakResidentMB(), 0)) MB")
    }

    /// Writes `vectors` in upserts of `batch`, and says when each epoch became current, how long the upserts
    /// took while the trainer worked (the writer's stall: the trainer runs on its own thread, and the writer
    /// waits only for its bounded commits), and what the trainer did. When the last upsert leaves the store at
    /// the training size untrained (the writer asks for training before a write), one more upsert of the last
    /// record asks for it; the load ends when the training has.
    func load(_ count: Int, _ next: (Int) -> [[Float]], into sink: LocalSink) async throws {
        let clock = ContinuousClock()
        var times: [Double] = []
        var during: [Double] = []
        var stalls: [String] = []
        var epoch = try await sink.info().details["ivf_epoch"]
        let start = clock.now
        func upsert(_ records: [VectorRecord], at stored: Int) async throws {
            let training = sink.ivfTrainingRuns
            let begin = clock.now
            try await sink.upsert(records)
            let seconds = LocalSearchBench.seconds(begin.duration(to: clock.now))
            times.append(seconds)
            if training || sink.ivfTrainingRuns { during.append(seconds) }
            let details = try await sink.info().details
            if details["ivf_epoch"] != epoch {
                stalls.append(
                    "after the upsert at \(stored) vectors (\(f(seconds, 2)) s): epoch \(details["ivf_epoch"] ?? "?"), "
                        + "\(details["ivf_lists"] ?? "?") lists trained on \(details["ivf_trained_on"] ?? "?")"
                )
                epoch = details["ivf_epoch"]
            }
        }
        var last: [Float] = []
        for first in stride(from: 0, to: count, by: batch) {
            let part = next(min(batch, count - first))
            last = part.last ?? last
            try await upsert(LocalSearchBench.records(part, from: first), at: first)
        }
        if count >= (trainAt ?? count), epoch?.hasPrefix("none") != false {
            try await upsert(LocalSearchBench.records([last], from: count - 1), at: count)
        }
        let loaded = clock.now
        try await sink.waitForIVFTraining()
        let details = try await sink.info().details
        if details["ivf_epoch"] != epoch {
            stalls.append(
                "after the load: epoch \(details["ivf_epoch"] ?? "?"), \(details["ivf_lists"] ?? "?") lists trained on "
                    + "\(details["ivf_trained_on"] ?? "?")"
            )
        }
        Self.say(
            "loaded through LocalSink.upsert in \(f(LocalSearchBench.seconds(start.duration(to: loaded)), 1)) s, "
                + "\(times.count) upserts of at most \(batch), median \(f(median(times), 3)) s, longest "
                + "\(f(times.max() ?? 0, 3)) s; the training ended \(f(LocalSearchBench.seconds(loaded.duration(to: clock.now)), 1)) s after the last upsert"
        )
        for stall in stalls { Self.say("  " + stall) }
        let trainer = sink.ivfTrainerCounts
        Self.say(
            "  while the trainer worked: \(during.count) upserts, median \(f(median(during), 3)) s, longest "
                + "\(f(during.max() ?? 0, 3)) s (the writer's longest stall); the trainer: \(trainer.trainings) trainings, "
                + "\(f(LocalSearchBench.seconds(trainer.computing), 1)) s computing outside write transactions, "
                + "\(trainer.commits) commits, the longest \(f(LocalSearchBench.seconds(trainer.longestCommit) * 1000, 1)) ms"
        )
        for (index, job) in trainer.jobs.enumerated() {
            Self.say(
                "  trainer job \(index + 1)\(job.trained ? " (trained an epoch)" : ""): wall "
                    + "\(f(LocalSearchBench.seconds(job.wall), 1)) s, CPU \(f(LocalSearchBench.seconds(job.cpu), 1)) s"
            )
        }
    }

    /// `NAME=FILE.npy`: the name and the file's rows.
    static func named(_ spec: String) throws -> (String, [[Float]]) {
        guard let equals = spec.firstIndex(of: "=") else {
            throw ValidationError("--queries and --truth take NAME=FILE.npy, not \(spec)")
        }
        return (
            String(spec[..<equals]),
            try NumPyMatrix(contentsOf: URL(fileURLWithPath: String(spec[spec.index(after: equals)...]))).rows
        )
    }

    /// One row: `queryVectors` at `setting` (0: auto), recall against the k-th best scores `kth`, counts from
    /// the store's own.
    func measure(
        _ name: String,
        _ setting: Int,
        _ queryVectors: [[Float]],
        _ kth: [Float],
        _ sink: LocalSink,
        of count: Int
    ) async throws {
        var codes: [Int] = []
        var lists = 0
        var answered = 0
        let (latencies, found) = try await LocalSearchBench.single(queryVectors) { query in
            try await sink.search(query, k: k)
        }
        let concurrent =
            concurrency > 0
            ? try await LocalSearchBench.concurrent(queryVectors, concurrency) { try await sink.search($0, k: k) } : nil
        // Counts per query: once more, one query at a time, reading the store's counters around each.
        for query in queryVectors {
            let before = sink.ivfScanned
            _ = try await sink.search(query, k: k)
            let after = sink.ivfScanned
            codes.append(after.codes - before.codes)
            lists += after.lists - before.lists
            answered += after.searches - before.searches
        }
        var recall = 0.0
        for (index, best) in kth.enumerated() {
            // A hit is any returned record whose score reaches the exact k-th best (ties count; 1e-5 for
            // the rounding of a truth computed elsewhere).
            recall += Double(min(k, found[index].filter { $0.score >= best - 1e-5 }.count)) / Double(k)
        }
        let sorted = codes.sorted()
        let mean = Double(codes.reduce(0, +)) / Double(max(1, codes.count))
        let rank = Int((Double(sorted.count) * 0.99).rounded(.up)) - 1
        let p99 = sorted.isEmpty ? 0 : sorted[max(0, min(sorted.count - 1, rank))]
        let details = try await sink.info().details
        let epochLists = Int(details["ivf_lists"] ?? "") ?? 0
        let auto: Int = LocalSink.IndexSettings(section: .init()).probes(lists: epochLists, vectors: count)
        let label = setting == 0 ? "ivf nprobe auto (\(auto))" : "ivf nprobe \(setting)"
        let fellBack = answered == queryVectors.count ? "" : " (\(queryVectors.count - answered) scanned)"
        Self.say(
            "| \(name) | \(label)\(fellBack) | \(f(recall / Double(max(1, kth.count)), 3)) | "
                + "\(f(Double(lists) / Double(max(1, answered)), 0)) | \(f(mean, 0)) | \(p99) | "
                + "\(f(mean / Double(max(1, count)) * 100, 2))% | \(f(latencies.percentile(0.5), 2)) | "
                + "\(f(latencies.percentile(0.99), 2)) |"
                + (concurrent.map {
                    " \(f($0.percentile(0.5), 2)) / \(f($0.percentile(0.99), 2)) | "
                        + "\(f(Double(queryVectors.count) / max($0.wall, 1e-9), 0)) |"
                } ?? "")
        )
    }
}
