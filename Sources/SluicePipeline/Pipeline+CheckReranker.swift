import Foundation
import SluiceCore
import SluiceHTTP

extension Pipeline {
    /// `sluice check`'s line about the reranker (`search.rerank`), nil when the pipeline names none: two
    /// short passages really scored, through the reranker's own retries (no deadline: the check waits for
    /// the answer). A refused key fails (exit 1); a server that cannot be reached, or answers nonsense,
    /// is unavailable (exit 6).
    func checkReranker() async -> DependencyCheck? {
        let settings = configuration.search.rerank
        guard let url = settings.url else { return nil }
        let place = "\(settings.kind) at \(redactedURL(url))"
        let reranking: SearchReranking
        do {
            guard let made = try SearchReranking(configuration: configuration) else { return nil }
            reranking = made
        } catch {
            return DependencyCheck(
                "reranker",
                .failed,
                "\(place): \(Self.failureDescription(error))",
                fix: "check the search.rerank section of the pipeline file"
            )
        }
        let model = reranking.reranker.model
        do {
            let scores = try await reranking.reranker.scores(
                query: "sluice check",
                documents: ["sluice check", "an unrelated passage"]
            )
            guard scores.count == 2 else {
                return DependencyCheck(
                    "reranker",
                    .failed,
                    "\(model), \(place): answered \(scores.count) scores for two passages",
                    fix: "check search.rerank.kind and search.rerank.url"
                )
            }
            return DependencyCheck("reranker", .ok, "\(model), \(place): scored two passages")
        } catch {
            return Self.failedCheck(
                "reranker",
                "\(model), \(place)",
                error,
                refused: "check the key in the variable search.rerank.api_key_env names",
                unavailable: "start the reranking service or correct search.rerank.url, then run again",
                otherwise: "check search.rerank.kind, url and model"
            )
        }
    }
}
