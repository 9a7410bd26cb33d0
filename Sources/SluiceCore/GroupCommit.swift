import Foundation
import Synchronization

/// Group commit for a store with one writer thread: writes that wait for the writer while it commits are
/// written together in its next transaction, and each caller is answered after that transaction's commit,
/// so that one sync serves many writes.
///
/// The first write that finds the writer idle starts a drainer on the `executor`; the drainer commits the
/// waiting writes in groups bounded by `budget` (their weights: estimated pages, records) through the
/// `commit` function of the write that started it, until none waits (``GroupCommitStateMachine``). This is
/// the leader-follower scheme of LevelDB and RocksDB's write groups, bounded by size as theirs is; unlike
/// PostgreSQL's `commit_delay` it never sleeps to gather writes: a group is what queued during the last
/// commit, so a lone writer commits at once.
///
/// A group that fails is committed again one write at a time, each answered with its own outcome: a write
/// that fails (a record LMDB refuses, a full map) fails alone and the others are committed. `commit` must
/// therefore leave nothing behind when it throws (an aborted transaction). A caller cancelled while its
/// write still waits gets `CancellationError` and its write is never committed; once taken, it is
/// committed and the caller gets the outcome.
///
/// `SLUICE_GROUP_COMMIT=off` in the environment commits every write in a transaction of its own, through
/// the same queue: the comparison docs/BENCHMARKS.md measures ("Group commit on the writers").
package final class GroupCommit<Member: Sendable>: Sendable {
    private struct Waiter: Sendable {
        let member: Member
        let continuation: CheckedContinuation<Void, any Error>
    }

    private let executor: BlockingExecutor
    private let state: Mutex<GroupCommitStateMachine<Waiter>>
    private let lastID = Atomic<UInt64>(0)
    private let groups = Atomic<Int>(0)
    private let members = Atomic<Int>(0)

    /// - Parameters:
    ///   - executor: the writer (one thread: the groups are committed in order).
    ///   - budget: the most weight one transaction takes.
    package init(executor: BlockingExecutor, budget: Int) {
        self.executor = executor
        self.state = Mutex(GroupCommitStateMachine(budget: budget, grouping: Self.grouping))
    }

    /// Whether writes are grouped: not when the environment says `SLUICE_GROUP_COMMIT=off`.
    static var grouping: Bool { groupCommitGrouping }

    /// Transactions committed so far (groups, including the single writes of a failed group's retry).
    package var transactions: Int { groups.load(ordering: .relaxed) }

    /// Writes committed or failed so far.
    package var writes: Int { members.load(ordering: .relaxed) }

    /// Writes waiting for a transaction (for tests).
    package var waitingCount: Int { state.withLock { $0.waitingCount } }

    /// Writes `member` in the writer's next transaction, with whatever else waits then, and returns after
    /// that transaction committed.
    /// - Parameters:
    ///   - weight: the member's share of the budget.
    ///   - commit: writes a group in one transaction, on the writer thread; it throws (leaving nothing) if
    ///     the transaction fails. Used for every group the drainer this call may start commits.
    /// - Throws: what committing `member` (alone, after its group failed) threw; `CancellationError` if the
    ///   caller was cancelled before a transaction took it.
    package func submit(
        _ member: Member,
        weight: Int,
        commit: @escaping @Sendable ([Member]) throws -> Void
    ) async throws {
        try Task.checkCancellation()
        let id = lastID.add(1, ordering: .relaxed).newValue
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action = state.withLock {
                    $0.enqueue(id: id, weight: weight, Waiter(member: member, continuation: continuation))
                }
                guard action == .startDrainer else { return }
                let started = executor.execute { [self] in self.drain(commit) }
                if !started {
                    let refused = state.withLock { $0.drainerRefused() }
                    for entry in refused {
                        entry.payload.continuation.resume(
                            throwing: SluiceError(.state, "executor \(executor.label) is shut down")
                        )
                    }
                }
            }
        } onCancel: {
            if let waiter = state.withLock({ $0.withdraw(id: id) }) {
                waiter.continuation.resume(throwing: CancellationError())
            }
        }
    }

    /// On the writer thread: commits groups until none waits.
    private func drain(_ commit: @Sendable ([Member]) throws -> Void) {
        while let group = state.withLock({ $0.nextGroup() }) {
            let outcomes = committed(group.map(\.payload.member), commit)
            for (entry, outcome) in zip(group, outcomes) { entry.payload.continuation.resume(with: outcome) }
        }
    }

    /// Commits `group` in one transaction, or, if that fails, each member in one of its own.
    private func committed(
        _ group: [Member],
        _ commit: @Sendable ([Member]) throws -> Void
    ) -> [Result<Void, any Error>] {
        members.add(group.count, ordering: .relaxed)
        groups.add(1, ordering: .relaxed)
        let together = Result { try commit(group) }
        guard case .failure = together else { return Array(repeating: together, count: group.count) }
        guard group.count > 1 else { return [together] }
        return group.map { member in
            groups.add(1, ordering: .relaxed)
            return Result { try commit([member]) }
        }
    }
}

/// Read once: `SLUICE_GROUP_COMMIT=off` turns grouping off for the process (``GroupCommit``).
private let groupCommitGrouping = ProcessInfo.processInfo.environment["SLUICE_GROUP_COMMIT"] != "off"
