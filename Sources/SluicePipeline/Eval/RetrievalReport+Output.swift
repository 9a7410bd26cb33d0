import Foundation
import SluiceCore

extension RetrievalReport {
    /// The metrics' names, as the table's columns and the JSON's keys.
    package var metricNames: [String] { cutoffs.map { "recall@\($0)" } + ["mrr@\(k)", "ndcg@\(k)"] }

    /// The scores as a table: one row per configuration and kind ("all" first); for a configuration that
    /// asked for the reranker, whether it ordered every query and each query it did not; then, with
    /// `misses`, each configuration's queries whose answers were not all found within k.
    package func table(misses: Bool) -> String {
        let nameWidth = max(13, configurations.map(\.configuration.name.count).max() ?? 0)
        let kindWidth = max(12, kinds.map(\.count).max() ?? 0)
        func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
            let space = String(repeating: " ", count: max(0, width - text.count))
            return right ? space + text : text + space
        }
        // With generations (`--generation`), a first column says which one each row searched.
        let generations = configurations.compactMap(\.generation?.label)
        let generationWidth = generations.isEmpty ? 0 : max(10, generations.map(\.count).max() ?? 0)
        func generationColumn(_ text: String) -> [String] { generations.isEmpty ? [] : [pad(text, generationWidth)] }
        let headers = cutoffs.map { "recall@\($0)" } + ["MRR", "nDCG@\(k)"]
        var lines = [
            "retrieval on \(queries.count) queries, top \(k) results per query",
            (generationColumn("generation")
                + [pad("configuration", nameWidth), pad("kind", kindWidth), pad("queries", 7, right: true)]
                + headers.map { pad($0, 9, right: true) }).joined(separator: " "),
        ]
        for kind in kinds {
            for scored in configurations {
                guard let summary = summary(scored, kind: kind) else { continue }
                let figures = summary.recall + [summary.meanReciprocalRank, summary.ndcg]
                lines.append(
                    (generationColumn(scored.generation?.label ?? "")
                        + [
                            pad(DisplayEscaping.escaped(scored.configuration.name), nameWidth),
                            pad(DisplayEscaping.escaped(kind), kindWidth), pad("\(summary.queries)", 7, right: true),
                        ] + figures.map { pad(String(format: "%.3f", $0), 9, right: true) }).joined(separator: " ")
                )
            }
        }
        for scored in configurations {
            guard let model = scored.rerankModel else { continue }
            let skipped = notReranked(scored)
            let name = DisplayEscaping.escaped(Self.name(scored))
            guard !skipped.isEmpty else {
                lines.append("\(name): reranked by \(DisplayEscaping.escaped(model)) on all \(queries.count) queries")
                continue
            }
            lines.append(
                "\(name): not reranked by \(DisplayEscaping.escaped(model)) on \(skipped.count) of \(queries.count) queries (scored in the first stage's order):"
            )
            for item in skipped {
                var line = "  \(DisplayEscaping.escaped(item.query.id))"
                if let kind = item.query.kind { line += " [\(DisplayEscaping.escaped(kind))]" }
                line += " \(DisplayEscaping.escaped(item.query.query)) — "
                line += DisplayEscaping.escaped(item.status.reason ?? "not applied")
                lines.append(line)
            }
        }
        guard misses else { return lines.joined(separator: "\n") + "\n" }
        for scored in configurations {
            let missed = self.misses(scored)
            lines.append("")
            lines.append(
                "\(DisplayEscaping.escaped(Self.name(scored))): \(missed.count) of \(queries.count) queries with an answer not in the top \(k)"
            )
            for miss in missed {
                let query = miss.query
                let found = miss.score.entryRanks.compactMap { $0 }
                var line = "  \(DisplayEscaping.escaped(query.id))"
                if let kind = query.kind { line += " [\(DisplayEscaping.escaped(kind))]" }
                line += " \(DisplayEscaping.escaped(query.query))"
                line += found.isEmpty ? " — nothing found" : " — found \(found.count) of \(query.relevant.count)"
                if let first = miss.score.firstHit { line += ", first at rank \(first)" }
                lines.append(line)
                for (entry, rank) in zip(query.relevant, miss.score.entryRanks) where rank == nil {
                    lines.append("      missed " + Self.describe(entry))
                }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A configuration's name, after its generation's when it has one (`candidate g1 hybrid`).
    static func name(_ scored: Scored) -> String {
        (scored.generation.map { $0.label + " " } ?? "") + scored.configuration.name
    }

    /// `key p.N “phrase”`, escaped for a terminal.
    static func describe(_ entry: JudgedQuery.Relevant) -> String {
        var text = DisplayEscaping.escaped(entry.key)
        if let page = entry.page { text += " p.\(page)" }
        if let contains = entry.contains { text += " “\(DisplayEscaping.escaped(contains))”" }
        return text
    }

    /// The report as one JSON object (keys sorted): `k`, `queries`, and `configurations`, in the order
    /// given, each with its `name`, `generation` (with `--generation`: `role`, `id`), `mode`, `fusion` (hybrid), `scores` per kind ("all" and each kind:
    /// `queries`, `recall@5`, `recall@K`, `mrr@K`, `ndcg@K`), `misses` (every query with an answer not in
    /// the top K: `id`, `query`, `kind`, `first_hit`, `found` with each hit entry's `rank`, `missed`) and,
    /// when it asked for the reranker, `rerank`: `model`, `reranked` (how many queries it ordered) and
    /// `not_reranked` (`id`, `query`, `kind`, `reason` of each query scored in the first stage's order).
    package func json() throws -> String {
        func entry(_ relevant: JudgedQuery.Relevant, rank: Int?) -> [String: Any] {
            var object: [String: Any] = ["key": relevant.key]
            if let page = relevant.page { object["page"] = page }
            if let contains = relevant.contains { object["contains"] = contains }
            if let rank { object["rank"] = rank }
            return object
        }
        let names = metricNames
        let configurations: [[String: Any]] = self.configurations.map { scored in
            var scores: [String: Any] = [:]
            for kind in kinds {
                guard let summary = summary(scored, kind: kind) else { continue }
                let figures = summary.recall + [summary.meanReciprocalRank, summary.ndcg]
                var object: [String: Any] = ["queries": summary.queries]
                for (name, figure) in zip(names, figures) { object[name] = figure }
                scores[kind] = object
            }
            let misses: [[String: Any]] = self.misses(scored).map { miss in
                let pairs = zip(miss.query.relevant, miss.score.entryRanks)
                var object: [String: Any] = [
                    "id": miss.query.id, "query": miss.query.query,
                    "first_hit": miss.score.firstHit.map { $0 as Any } ?? NSNull(),
                    "found": pairs.compactMap { relevant, rank in rank.map { entry(relevant, rank: $0) } },
                    "missed": pairs.filter { $0.1 == nil }.map { entry($0.0, rank: nil) },
                ]
                if let kind = miss.query.kind { object["kind"] = kind }
                return object
            }
            var object: [String: Any] = ["name": scored.configuration.name, "scores": scores, "misses": misses]
            if let generation = scored.generation {
                object["generation"] = ["role": generation.role, "id": generation.id]
            }
            if let mode = scored.configuration.options.mode { object["mode"] = mode.rawValue }
            if let fusion = scored.configuration.options.fusion { object["fusion"] = fusion.name }
            if let model = scored.rerankModel {
                let skipped = notReranked(scored)
                object["rerank"] =
                    [
                        "model": model,
                        "reranked": scored.rerank.count { $0?.applied == true },
                        "not_reranked": skipped.map { item in
                            var entry: [String: Any] = [
                                "id": item.query.id, "query": item.query.query,
                                "reason": item.status.reason.map { $0 as Any } ?? NSNull(),
                            ]
                            if let kind = item.query.kind { entry["kind"] = kind }
                            return entry
                        },
                    ] as [String: Any]
            }
            return object
        }
        let object: [String: Any] = ["k": k, "queries": queries.count, "configurations": configurations]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
