/// Re-scores a query's first-stage results with a model that reads the query and each passage together (a
/// cross-encoder), the optional second stage of a search (`search.rerank`, docs/USAGE.md "Reranking").
public protocol Reranker: Sendable {
    /// The model's name, as results and `sluice check` report it.
    var model: String { get }
    /// One relevance score per document, in the documents' order; higher is more relevant. Scores of one
    /// call are comparable with each other, whatever requests the call was split into.
    /// - Throws: ``SluiceError``: ``SluiceError/Code/providerRefused`` (a key refused),
    ///   ``SluiceError/Code/dependencyUnavailable`` (not reachable, or still failing after its retries),
    ///   ``SluiceError/Code/usage`` (a request the server will never accept).
    func scores(query: String, documents: [String]) async throws -> [Double]
}
