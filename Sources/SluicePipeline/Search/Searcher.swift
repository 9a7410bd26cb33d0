import Foundation
import SluiceCore
import SluiceState

/// Answers search queries over a pipeline's index (docs/DESIGN.md §10): embeds the query with the index's
/// own embedder, asks the store for its vector and keyword rankings with the filter pushed down, fuses
/// them (hybrid), collapses identical texts and builds snippets. The CLI's `search`, `ask` and the HTTP
/// service all search through it.
public struct Searcher: Sendable {
    public let embedder: any Embedder
    public let sink: any VectorSink
    /// How hybrid merges the two rankings when the query names no rule (`search.fusion`; score fusion
    /// unless the pipeline says otherwise, measured on Benchmarks/retrieval, README "Fusion").
    public var fusion: SearchFusion = .default
    /// The embedder identity the pipeline's state recorded when it built the index
    /// (``recordedEmbedder(configuration:)``): checked as well as the store's own record, which some
    /// stores (Qdrant, Pinecone) do not keep.
    public var indexEmbedder: String?
    /// The second stage (`search.rerank`), applied by ``searchOutcome(_:)``; ``search(_:)`` is the first.
    public var reranking: SearchReranking?

    public init(embedder: any Embedder, sink: any VectorSink) {
        self.embedder = embedder
        self.sink = sink
    }

    /// The mode a query without one uses: hybrid where the store has keyword search.
    public var defaultMode: SearchMode { sink.searchModes.contains(.keyword) ? .hybrid : .vector }

    /// The modes this store answers.
    public var modes: [SearchMode] {
        SearchMode.allCases.filter {
            $0 == .hybrid ? sink.searchModes.contains(.keyword) : sink.searchModes.contains($0)
        }
    }

    public func search(_ query: SearchQuery) async throws -> [SearchResult] {
        let text = query.text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !text.isEmpty else { throw SluiceError(.usage, "the query is empty") }
        guard (1...SearchQuery.maxK).contains(query.k) else {
            throw SluiceError(.usage, "k must be between 1 and \(SearchQuery.maxK), not \(query.k)")
        }
        if let minScore = query.minScore, !minScore.isFinite {
            throw SluiceError(.usage, "the minimum score must be a number")
        }
        let mode = query.mode ?? defaultMode
        let fusion = query.fusion ?? self.fusion
        if let problem = fusion.problem { throw SluiceError(.usage, "fusion \(fusion.name): \(problem)") }
        guard modes.contains(mode) else {
            throw SluiceError(
                .usage,
                "\(sink.name) has no \(mode.rawValue) search (it has \(modes.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        try Self.checkSize(text, mode: mode)
        // Named by its kind (`pgvector`), without the host or path of its name.
        try query.filter?.check(sink.filterLimits, store: String(sink.name.prefix { $0 != ":" }))
        // Collapsing copies and fusing need more candidates than k.
        let depth = min(SearchQuery.maxK, max(query.k * 4, mode == .hybrid ? 50 : query.k + 10))
        var vector: [Float] = []
        var vectorHits: [SearchHit] = []
        var keywordHits: [SearchHit] = []
        if mode != .keyword {
            // A store that embeds the text itself is sent the query's text alone.
            if !sink.embedsText { vector = try await embedQuery(text) }
            vectorHits = try await sink.search(
                SearchRequest(mode: .vector, vector: vector, text: text, k: depth, filter: query.filter)
            )
        }
        if mode != .vector {
            keywordHits = try await sink.search(
                SearchRequest(mode: .keyword, text: text, k: depth, filter: query.filter)
            )
        }
        let vectorScores = Dictionary(vectorHits.map { ($0.record.id, Double($0.score)) }) { first, _ in first }
        let keywordScores = Dictionary(keywordHits.map { ($0.record.id, Double($0.score)) }) { first, _ in first }
        let ranked: [(record: VectorRecord, score: Double)]
        switch mode {
        case .vector: ranked = vectorHits.map { ($0.record, Double($0.score)) }
        case .keyword: ranked = keywordHits.map { ($0.record, Double($0.score)) }
        case .hybrid: ranked = fusion.fuse(query: text, vector: vectorHits, keyword: keywordHits)
        }
        var results: [SearchResult] = []
        var byText: [ContentHash: Int] = [:]
        for (record, score) in ranked {
            var similarity = vectorScores[record.id]
            if similarity == nil, mode == .hybrid, record.vector.count == vector.count {
                similarity = Double(VectorMath.cosine(vector, record.vector))
            }
            if let minScore = query.minScore {
                let judged = mode == .keyword ? keywordScores[record.id] : similarity
                guard let judged, judged >= minScore else { continue }
            }
            if query.collapseDuplicates {
                let hash = ContentHash(utf8: Chunk.normalize(record.text))
                if let index = byText[hash] {
                    results[index].duplicates.append(
                        .init(id: record.id, documentKey: record.documentKey, page: record.metadata["page"]?.integer)
                    )
                    continue
                }
                guard results.count < query.k else { continue }
                byText[hash] = results.count
            } else if results.count == query.k {
                break
            }
            results.append(
                SearchResult(
                    record: record,
                    score: score,
                    vectorScore: similarity,
                    keywordScore: keywordScores[record.id],
                    query: text
                )
            )
        }
        return results
    }

    /// Refuses a query past ``SearchQuery/maxBytes``, or, ranked by keywords, past
    /// ``SearchQuery/maxKeywordTerms`` distinct words.
    static func checkSize(_ text: String, mode: SearchMode) throws {
        guard text.utf8.count <= SearchQuery.maxBytes else {
            throw SluiceError(
                .usage,
                "the query is \(text.utf8.count) bytes long; at most \(SearchQuery.maxBytes) are searched (ask a question, not a document)"
            )
        }
        guard mode != .vector else { return }
        let terms = Set(KeywordTokenizer.terms(of: text)).count
        guard terms <= SearchQuery.maxKeywordTerms else {
            throw SluiceError(
                .usage,
                "the query holds \(terms) distinct words; a \(mode.rawValue) search ranks by at most \(SearchQuery.maxKeywordTerms) (use --mode vector, or fewer words)"
            )
        }
    }

    /// The embedder identity the state at `configuration.state` recorded, or nil (no state yet).
    public static func recordedEmbedder(configuration: PipelineConfiguration) -> String? {
        let directory = configuration.resolve(configuration.state)
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
            return nil
        }
        // A state that cannot be read gives no embedder to compare: the store's own record is still checked
        // (`embedQuery`), and the damage is reported where the state itself is read (`sluice status`, `run`,
        // `/ready`), so a search from an intact store goes on.
        return try? CheckpointStore(directory: directory, readOnly: true, generation: configuration.generation)
            .metadata("embedder")
    }

    /// The query's vector, after checking that the store's vectors come from this embedder.
    func embedQuery(_ text: String) async throws -> [Float] {
        let identity = embedder.identity
        if let indexEmbedder, indexEmbedder != identity.description {
            throw SluiceError(
                .embedderMismatch,
                "the index was built with embedder \(indexEmbedder) (the state says so), the pipeline's embedder is \(identity): its query vectors would not be comparable. Search with the pipeline that built the index."
            )
        }
        let info = try await sink.info()
        if let stored = info.embedder, stored != identity.description, info.count > 0 {
            throw SluiceError(
                .embedderMismatch,
                "\(sink.name) holds vectors of \(stored), the pipeline's embedder is \(identity): its query vectors would not be comparable. Search with the pipeline that built the index."
            )
        }
        if let dimensions = info.dimensions, dimensions != identity.dimensions, info.count > 0 {
            throw SluiceError(
                .embedderMismatch,
                "\(sink.name) holds \(dimensions)-dimensional vectors, the pipeline's embedder makes \(identity.dimensions)"
            )
        }
        let vector = try await embedder.embed([text])[0]
        if let problem = VectorMath.problem(vector) { throw SluiceError(.embeddingFailed, "the query: \(problem)") }
        return vector
    }
}

extension SearchResult {
    init(record: VectorRecord, score: Double, vectorScore: Double?, keywordScore: Double?, query: String) {
        var metadata = record.metadata
        let page = metadata["page"]?.integer
        var headings: [String] = []
        switch metadata["headings"] {
        case .strings(let path): headings = path
        case .string(let path): headings = path.components(separatedBy: " > ")
        default: break
        }
        let title = metadata["title"]?.text
        for key in ["page", "headings", "title", "document_key", "ordinal", "text"] { metadata[key] = nil }
        self.init(
            id: record.id,
            score: score,
            vectorScore: vectorScore,
            keywordScore: keywordScore,
            documentKey: record.documentKey,
            ordinal: record.ordinal,
            page: page,
            headings: headings,
            title: title,
            text: record.text,
            snippet: Snippet.make(text: record.text, query: query),
            metadata: metadata,
            duplicates: []
        )
    }
}
