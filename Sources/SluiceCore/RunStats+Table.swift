import Foundation

extension RunStats {
    /// The end-of-run table: one row per phase, then the counters.
    public func table() -> String {
        var lines: [String] = []
        let header = [
            "phase", "workers", "in", "out", "MB", "busy s", "cpu s", "starved s", "blocked s", "items/s", "p50 ms",
            "p95 ms", "p99 ms",
        ]
        var rows: [[String]] = [header]
        for p in phases {
            let rate = wallSeconds > 0 ? Double(p.itemsOut) / wallSeconds : 0
            rows.append([
                p.name, "\(p.workers)", "\(p.itemsIn)", "\(p.itemsOut)", Self.fixed(Double(p.bytes) / 1_048_576, 2),
                Self.fixed(p.busySeconds, 2), p.cpuSeconds.map { Self.fixed($0, 2) } ?? "-",
                Self.fixed(p.starvedSeconds, 2), Self.fixed(p.blockedSeconds, 2),
                Self.fixed(rate, 1), Self.fixed(p.latencyQuantile(0.5) * 1000, 2),
                Self.fixed(p.latencyQuantile(0.95) * 1000, 2), Self.fixed(p.latencyQuantile(0.99) * 1000, 2),
            ])
        }
        let widths = (0..<header.count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            let cells = row.enumerated().map { column, cell in
                column == 0
                    ? cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                    : String(repeating: " ", count: widths[column] - cell.count) + cell
            }
            lines.append(cells.joined(separator: "  "))
            if index == 0 { lines.append(widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")) }
        }
        lines.append("")
        lines.append(summary())
        return lines.joined(separator: "\n")
    }

    /// The counters under the table: documents, chunks, vectors, wall time, failures, and how the run
    /// stopped. All `run --quiet` prints at the end.
    public func summary() -> String {
        var lines: [String] = []
        let mb = Double(bytesRead) / 1_048_576
        lines.append(
            "documents: \(documentsUpserted) upserted, \(documentsSkipped) skipped, \(documentsFailed) failed"
                + (documentsPruned > 0 ? ", \(documentsPruned) pruned" : "")
                + (documentsNotReached > 0
                    ? ", \(documentsNotReached) not reached (\(providerRefusal == nil ? "interrupted" : "provider refused"))"
                    : "")
                + ((extractionsShared ?? 0) > 0
                    ? " · \(extractionsShared ?? 0) extracted once with an identical file" : "")
                + ((extractionsCached ?? 0) > 0
                    ? " · \(extractionsCached ?? 0) extractions from the state's cache" : "")
                + (captionsMade != nil || captionsCached != nil
                    ? " · captions: \(captionsMade ?? 0) made, \(captionsCached ?? 0) from the state's cache" : "")
        )
        lines.append(
            "chunks: \(chunks) (\(chunksEmbedded) embedded, \(cacheHits) from cache"
                + ((vectorsAdopted ?? 0) > 0 ? ", of which \(vectorsAdopted ?? 0) adopted from the store" : "")
                + ") · tokens embedded: \(tokensEmbedded) · requests: \(embedRequests), retries: \(embedRetries), 429s: \(rateLimited)"
        )
        lines.append("vectors: \(vectorsUpserted) upserted, \(vectorsDeleted) deleted")
        if let ocrSummary { lines.append(ocrSummary) }
        let docRate = wallSeconds > 0 ? Double(documentsUpserted + documentsSkipped + documentsFailed) / wallSeconds : 0
        lines.append(
            "wall: \(Self.fixed(wallSeconds, 2)) s · \(Self.fixed(docRate, 1)) documents/s · \(Self.fixed(wallSeconds > 0 ? mb / wallSeconds : 0, 2)) MB/s read · \(Self.fixed(wallSeconds > 0 ? Double(chunks) / wallSeconds : 0, 1)) chunks/s"
        )
        if !failuresByCode.isEmpty {
            lines.append(
                "failures: "
                    + failuresByCode.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            )
        }
        if let upkeepSummary { lines.append(upkeepSummary) }
        if interrupted { lines.append("interrupted: run the same command again to resume") }
        if let providerRefusal {
            lines.append("stopped, provider refused: \(providerRefusal) — fix it, then run again to resume")
        }
        return lines.joined(separator: "\n")
    }

    /// The store's upkeep that failed (keyword merges), with the first reason of each kind; nil when none.
    public var upkeepSummary: String? {
        guard let upkeepFailures, upkeepFailures.count > 0 else { return nil }
        let reasons = upkeepFailures.reasons.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        return "store upkeep: \(upkeepFailures.count) keyword merge passes failed"
            + (upkeepFailures.stopped ? ", merges stopped until the next run" : "") + " ("
            + reasons.joined(separator: "; ") + ") — searches stay right; see docs/RELIABILITY.md"
    }

    static func fixed(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
}
