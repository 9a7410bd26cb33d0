import Synchronization

/// How many vectors of changed documents whose new version failed a run may still delete: the
/// mass-delete guard's share (`run.max_delete_fraction`) of the vectors the state tracks, counted when
/// first needed. A source whose files were all truncated or replaced by unreadable copies (a broken sync)
/// must not empty the index any more than a mis-mounted folder may; past the budget the old vectors are
/// kept and the failure says so.
package final class StaleDeletionBudget: Sendable {
    private let fraction: Double
    private let unlimited: Bool
    /// Vectors that may still be deleted; nil until the tracked count is known.
    private let remaining = Mutex<Int?>(nil)

    package init(fraction: Double, unlimited: Bool) {
        self.fraction = fraction
        self.unlimited = unlimited
    }

    /// Whether the tracked count must be supplied (``start(tracked:)``) before ``take(_:)``.
    package var needsBase: Bool { !unlimited && remaining.withLock { $0 == nil } }

    /// Sets the budget from the vectors the state tracks (once; later calls are ignored).
    package func start(tracked: Int) {
        remaining.withLock { if $0 == nil { $0 = Int((fraction * Double(tracked)).rounded(.down)) } }
    }

    /// Takes `count` deletions from the budget if it holds them all.
    package func take(_ count: Int) -> Bool {
        if unlimited { return true }
        return remaining.withLock { left in
            guard let available = left, available >= count else { return false }
            left = available - count
            return true
        }
    }
}
