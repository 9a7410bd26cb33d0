import Foundation
import SluiceCore

/// The figures of a progress line: documents done out of the total, percent, rate and ETA. Pure, so
/// that the line and the log fields are the same everywhere and tested without a run.
extension RunProgress {
    /// The last figures of a finished run, from its statistics: every document it took is done, and the
    /// total includes those an interruption left for the next run.
    public init(finished stats: RunStats) {
        let done = stats.documentsUpserted + stats.documentsSkipped + stats.documentsFailed
        self.init(
            elapsedSeconds: stats.wallSeconds,
            scanned: done,
            stats: stats,
            inFlight: 0,
            total: done + stats.documentsNotReached
        )
    }

    /// Documents that reached the checkpoint (upserted, skipped or failed).
    public var done: Int { stats.documentsUpserted + stats.documentsSkipped + stats.documentsFailed }

    /// Documents done per second of the run so far.
    public var documentsPerSecond: Double { elapsedSeconds > 0 ? Double(done) / elapsedSeconds : 0 }

    /// Percent of the total done, once the total is known.
    public var percent: Double? {
        guard let total else { return nil }
        return total > 0 ? min(100, 100 * Double(done) / Double(total)) : 100
    }

    /// Seconds left at the rate so far, once the total is known and something is done.
    public var etaSeconds: Double? {
        guard let total else { return nil }
        let left = max(0, total - done)
        if left == 0 { return 0 }
        let rate = documentsPerSecond
        return rate > 0 ? Double(left) / rate : nil
    }

    /// The progress line: `12s  done 40/100 (40%)  3.3 docs/s  ETA 18s  (upserted 30, skipped 8, failed 2)  in flight 4  chunks 310  embedded 120`
    /// (before the total is known: `12s  scanned 57  done 40  3.3 docs/s  (…)  …`).
    public var line: String {
        var parts = [Self.duration(elapsedSeconds)]
        if let total, let percent {
            parts.append("done \(done)/\(total) (\(String(format: "%.0f", percent.rounded(.down)))%)")
        } else {
            parts.append("scanned \(scanned)  done \(done)")
        }
        parts.append(String(format: "%.1f docs/s", documentsPerSecond))
        if total != nil { parts.append("ETA " + (etaSeconds.map(Self.duration) ?? "-")) }
        parts.append(
            "(upserted \(stats.documentsUpserted), skipped \(stats.documentsSkipped), failed \(stats.documentsFailed))"
        )
        parts.append("in flight \(inFlight)  chunks \(stats.chunks)  embedded \(stats.chunksEmbedded)")
        return parts.joined(separator: "  ")
    }

    /// The same figures as named values, for structured log lines. `total`, `percent` and `eta_s` are
    /// absent until the scan has counted the documents (and `eta_s` while nothing is done yet).
    public var fields: [(name: String, value: Double)] {
        var out: [(String, Double)] = [
            ("elapsed_s", Self.rounded(elapsedSeconds)), ("scanned", Double(scanned)), ("done", Double(done)),
        ]
        if let total { out.append(("total", Double(total))) }
        if let percent { out.append(("percent", Self.rounded(percent))) }
        out.append(("docs_per_s", Self.rounded(documentsPerSecond)))
        if let etaSeconds { out.append(("eta_s", etaSeconds.rounded(.up))) }
        out += [
            ("upserted", Double(stats.documentsUpserted)), ("skipped", Double(stats.documentsSkipped)),
            ("failed", Double(stats.documentsFailed)), ("in_flight", Double(inFlight)),
            ("chunks", Double(stats.chunks)),
            ("embedded", Double(stats.chunksEmbedded)),
        ]
        return out
    }

    /// `42s`, `3m05s`, `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded(.up))
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return String(format: "%dm%02ds", whole / 60, whole % 60) }
        return String(format: "%dh%02dm", whole / 3600, (whole % 3600) / 60)
    }

    private static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }
}
