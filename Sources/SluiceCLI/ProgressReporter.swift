import Foundation
import Logging
import Sluice
import SluiceCommandLine
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A live progress line on a terminal; a plain log line every 10 seconds otherwise (and one with the
/// final figures at the end, so a log always has them). Both carry the same figures (``RunProgress/line``;
/// in JSON logs also as fields, ``RunProgress/fields``). At the end, ``finish(with:)`` ends the terminal
/// line before the summary, so the two are never glued together.
final class ProgressReporter: Sendable {
    private let quiet: Bool
    private let terminal: Bool
    private let logger: Logger
    /// When the last plain line was logged, and whether the run is over (late reports are dropped). One
    /// lock, so that a report racing the end cannot draw after the summary. (The terminal line itself
    /// is ``LiveLine``'s, which log lines clear first.)
    private let state = Mutex(State())

    private struct State {
        var lastLog = 0.0
        var finished = false
    }

    /// - Parameter terminal: Draw a live line (standard error is a terminal, and logs are text: JSON logs
    ///   get plain progress lines wherever they go).
    init(quiet: Bool, logger: Logger, terminal: Bool = isatty(STDERR_FILENO) == 1 && LogOutput.format == .text) {
        self.quiet = quiet
        self.terminal = terminal
        self.logger = logger
    }

    func report(_ progress: RunProgress) {
        guard !quiet else { return }
        state.withLock { state in
            guard !state.finished else { return }
            if terminal {
                LiveLine.draw(progress.line)
            } else if progress.elapsedSeconds - state.lastLog >= 10 {
                state.lastLog = progress.elapsedSeconds
                log(progress)
            }
        }
    }

    /// Ends the progress display with the run's final figures, then prints the summary on a line of its
    /// own: the phase table, or with `--quiet` the short summary only.
    func finish(with stats: RunStats) {
        let last = RunProgress(finished: stats)
        state.withLock { state in
            state.finished = true
            guard !quiet else { return }
            if terminal {
                LiveLine.end(last.line)
            } else {
                log(last)
            }
        }
        if LogOutput.format == .json {
            // Standard error stays one JSON object per line: the summary is a log line too (a notice, so
            // that --quiet keeps it), with the final figures as fields; the table is --stats-json's.
            logger.notice(
                "summary: \(stats.summary().split(separator: "\n").joined(separator: " · "))",
                metadata: Self.metadata(last)
            )
        } else {
            FileHandle.standardError.write(Data(((quiet ? stats.summary() : "\n" + stats.table()) + "\n").utf8))
        }
    }

    private static func metadata(_ progress: RunProgress) -> Logger.Metadata {
        var metadata: Logger.Metadata = [:]
        for field in progress.fields {
            metadata["sluice-" + field.name.replacingOccurrences(of: "_", with: "-")] = .stringConvertible(field.value)
        }
        return metadata
    }

    private func log(_ progress: RunProgress) {
        // The text line already says it all; JSON lines carry the figures as fields too.
        logger.info("progress: \(progress.line)", metadata: LogOutput.format == .json ? Self.metadata(progress) : [:])
    }
}

enum DryRunPrinter {
    static func render(_ report: DryRunReport, tokenPrice: Double? = nil) -> String {
        var lines = [
            "dry run: \(report.added.count) to add, \(report.changed.count) changed, \(report.metadataChanged.count) with new metadata only, \(report.retried.count) failed before (retried), \(report.unchanged) unchanged (skipped), \(report.knownFailures) known failures (skipped), \(report.deleted.count) to delete (\(report.vectorsToDelete) vectors)"
        ]
        if !report.shapingChanges.isEmpty {
            let embedding =
                report.shapingChangesEmbed
                ? "chunk.context changes what is embedded: their chunks are embedded again"
                : "vectors of unchanged texts come from the embedding cache"
            lines.append(
                "settings that shape chunks changed (\(DisplayEscaping.escaped(report.shapingChanges.joined(separator: "; ")))): the documents they concern are written again (\(embedding))"
            )
        }
        if let cost = report.cost {
            var line =
                "to embed: \(cost.tokens) tokens in \(cost.chunks - cost.chunksCached) chunks of \(cost.documents) documents (\(cost.chunksCached) chunks from the embedding cache)"
            if let tokenPrice {
                line += String(
                    format: ", about $%.2f at $%g per million tokens",
                    Double(cost.tokens) * tokenPrice / 1e6,
                    tokenPrice
                )
            }
            if cost.notEstimated > 0 {
                line +=
                    "; \(cost.notEstimated) documents not counted (to be extracted first: not in the extraction cache)"
            }
            lines.append(line)
        }
        for (label, keys) in [
            ("add", report.added), ("change", report.changed), ("metadata", report.metadataChanged),
            ("retry", report.retried), ("delete", report.deleted),
        ] {
            for key in keys { lines.append("  \(label)  \(DisplayEscaping.escaped(key))") }
        }
        if let refusal = report.massDeleteRefusal { lines.append("refused: \(DisplayEscaping.escaped(refusal))") }
        return lines.joined(separator: "\n")
    }
}
