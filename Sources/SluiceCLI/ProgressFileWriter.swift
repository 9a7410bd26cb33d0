import Foundation
import Sluice
import SluiceCommandLine
import Synchronization

/// `sluice run --progress-json FILE` (hidden; `sluice serve` starts its runs with it): the run's progress
/// as a ``RunProgressFile``, replaced atomically at most twice a second and once more at the end.
final class ProgressFileWriter: Sendable {
    private let url: URL
    private let lastWrite = Mutex(-1.0)

    init(path: String) {
        url = URL(fileURLWithPath: path)
    }

    func report(_ progress: RunProgress) {
        let due = lastWrite.withLock { last in
            guard progress.elapsedSeconds - last >= 0.5 else { return false }
            last = progress.elapsedSeconds
            return true
        }
        if due { try? RunProgressFile(progress: progress).write(to: url) }
    }

    func finish(with stats: RunStats) {
        try? RunProgressFile(finished: stats).write(to: url)
    }
}
