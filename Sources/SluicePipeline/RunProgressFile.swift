import Foundation
import SluiceCore

/// How a run started by the server tells it its progress: the child `sluice run --progress-json FILE`
/// replaces FILE (atomically) with this as it goes and once more when it ends; `GET /v1/runs/{id}` reads it.
package struct RunProgressFile: Sendable, Codable {
    package var elapsedSeconds: Double
    package var documentsDone: Int
    package var documentsTotal: Int?
    package var stats: RunStats
    /// Whether the run has ended (the last write).
    package var finished: Bool

    enum CodingKeys: String, CodingKey {
        case stats, finished
        case elapsedSeconds = "elapsed_s"
        case documentsDone = "documents_done"
        case documentsTotal = "documents_total"
    }

    package init(progress: RunProgress, finished: Bool = false) {
        elapsedSeconds = progress.elapsedSeconds
        stats = progress.stats
        documentsDone = stats.documentsUpserted + stats.documentsSkipped + stats.documentsFailed
        documentsTotal = progress.total
        self.finished = finished
    }

    package init(finished stats: RunStats) {
        elapsedSeconds = stats.wallSeconds
        self.stats = stats
        documentsDone = stats.documentsUpserted + stats.documentsSkipped + stats.documentsFailed
        documentsTotal = documentsDone + stats.documentsNotReached
        finished = true
    }

    package func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: url, options: .atomic)
    }

    package static func read(_ url: URL) -> RunProgressFile? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(RunProgressFile.self, from: data)
    }
}
