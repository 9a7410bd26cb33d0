import SluiceCore
import SluiceState

/// The run's writes to the checkpoint from its stages (pending ids, claims, the embedding cache), committed
/// together when they wait for the state's thread at the same time (``GroupCommit``): one transaction and
/// one sync for all of them, each caller answered after it. A write returns only once its transaction is
/// durable, so the order docs/RELIABILITY.md states (pending ids before the sink is written, claims after it
/// acknowledged) holds as with a transaction each; a write that fails in a group is retried alone.
package struct CheckpointCommits: Sendable {
    /// The most records and entries one transaction takes (the largest single write still goes alone).
    static let budget = 1_024

    private let checkpoint: CheckpointStore
    private let commits: GroupCommit<CheckpointWrite>

    /// - Parameter executor: the state's thread (every other state write goes through it too).
    package init(checkpoint: CheckpointStore, executor: BlockingExecutor) {
        self.checkpoint = checkpoint
        self.commits = GroupCommit(executor: executor, budget: Self.budget)
    }

    /// Transactions committed so far.
    package var transactions: Int { commits.transactions }

    /// Writes waiting for a transaction (for tests).
    var waitingCount: Int { commits.waitingCount }

    /// Commits `write`, with the other writes waiting then, and returns once it is durable.
    /// - Throws: what committing it threw; `CancellationError` if cancelled before a transaction took it.
    package func write(_ write: CheckpointWrite) async throws {
        try await commits.submit(write, weight: write.weight) { [checkpoint] group in try checkpoint.write(group) }
    }
}
