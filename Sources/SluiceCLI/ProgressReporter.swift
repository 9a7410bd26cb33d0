import Foundation
import Logging
import Sluice
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A live progress line on a terminal; a plain log line every 10 seconds otherwise.
final class ProgressReporter: Sendable {
    private let quiet: Bool
    private let terminal: Bool
    private let logger: Logger
    private let lastLog = Mutex(0.0)
    private let drewLine = Atomic<Bool>(false)

    init(quiet: Bool, logger: Logger) {
        self.quiet = quiet
        self.terminal = isatty(STDERR_FILENO) == 1
        self.logger = logger
    }

    func report(_ progress: RunProgress) {
        guard !quiet else { return }
        let s = progress.stats
        let done = s.documentsUpserted + s.documentsSkipped + s.documentsFailed
        let line = String(
            format: "%.0fs  scanned %d  done %d (upserted %d, skipped %d, failed %d)  in flight %d  chunks %d  embedded %d",
            progress.elapsedSeconds, progress.scanned, done, s.documentsUpserted, s.documentsSkipped, s.documentsFailed,
            progress.inFlight, s.chunks, s.chunksEmbedded)
        if terminal {
            FileHandle.standardError.write(Data("\r\u{1B}[2K\(line)".utf8))
            drewLine.store(true, ordering: .relaxed)
        } else {
            let due = lastLog.withLock { last -> Bool in
                if progress.elapsedSeconds - last >= 10 {
                    last = progress.elapsedSeconds
                    return true
                }
                return false
            }
            if due { logger.info("progress: \(line)") }
        }
    }

    func finish() {
        if drewLine.load(ordering: .relaxed) { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}

enum DryRunPrinter {
    static func render(_ report: DryRunReport) -> String {
        var lines = [
            "dry run: \(report.added.count) to add, \(report.changed.count) changed, \(report.retried.count) failed before (retried), \(report.unchanged) unchanged (skipped), \(report.deleted.count) to delete (\(report.vectorsToDelete) vectors)"
        ]
        for (label, keys) in [("add", report.added), ("change", report.changed), ("retry", report.retried), ("delete", report.deleted)] {
            for key in keys { lines.append("  \(label)  \(DisplayEscaping.escaped(key))") }
        }
        if let refusal = report.massDeleteRefusal { lines.append("refused: \(DisplayEscaping.escaped(refusal))") }
        return lines.joined(separator: "\n")
    }
}
