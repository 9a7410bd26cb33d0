/// The decisions of ``GroupCommit``, without threads or I/O: who waits, when a drainer must be started, and
/// which waiting writes the next transaction takes.
///
/// One drainer at a time: the first write that finds none running starts one; the drainer takes the
/// longest prefix of the waiting writes whose weights fit in the budget (at least one write, however
/// heavy), commits it, and takes again until nothing waits. Writes that arrive while a transaction
/// commits wait for the next one, so that one sync serves every write that queued behind it (the leader of
/// LevelDB's and RocksDB's write groups, `DBImpl::Write` and `BuildBatchGroup`, takes the writers queued
/// behind it the same way, bounded by a size).
struct GroupCommitStateMachine<Payload> {
    struct Entry {
        let id: UInt64
        let weight: Int
        let payload: Payload
    }

    enum EnqueueAction: Equatable {
        /// No drainer runs: the caller must start one.
        case startDrainer
        /// A drainer runs and will take the write.
        case none
    }

    private var waiting: [Entry] = []
    private var draining = false
    let budget: Int
    /// Whether a transaction takes more than one write (off: one each, for comparisons).
    let grouping: Bool

    /// - Parameters:
    ///   - budget: the most weight one transaction takes (a heavier write still goes alone).
    ///   - grouping: false commits each write in a transaction of its own, in order.
    init(budget: Int, grouping: Bool = true) {
        self.budget = max(1, budget)
        self.grouping = grouping
    }

    /// Writes waiting for a transaction.
    var waitingCount: Int { waiting.count }

    /// Whether a drainer runs.
    var isDraining: Bool { draining }

    mutating func enqueue(id: UInt64, weight: Int, _ payload: Payload) -> EnqueueAction {
        waiting.append(Entry(id: id, weight: max(0, weight), payload: payload))
        if draining { return .none }
        draining = true
        return .startDrainer
    }

    /// The writes the drainer commits next, in the order they came; nil when none waits (the drainer stops,
    /// and the next write starts another).
    mutating func nextGroup() -> [Entry]? {
        guard !waiting.isEmpty else {
            draining = false
            return nil
        }
        var weight = waiting[0].weight
        var end = 1
        while grouping && end < waiting.count && weight + waiting[end].weight <= budget {
            weight += waiting[end].weight
            end += 1
        }
        let group = Array(waiting[..<end])
        waiting.removeFirst(end)
        return group
    }

    /// Takes back a write no transaction took yet (its caller was cancelled); nil if it was taken.
    mutating func withdraw(id: UInt64) -> Payload? {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return nil }
        return waiting.remove(at: index).payload
    }

    /// The drainer could not be started (the writer thread is shut down): every waiting write, to fail.
    mutating func drainerRefused() -> [Entry] {
        draining = false
        defer { waiting.removeAll() }
        return waiting
    }
}
