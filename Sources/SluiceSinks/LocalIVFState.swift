import Synchronization

/// What this process keeps of the IVF index: the centroids of the epochs it has read (an epoch's centroids
/// never change once written, and epoch numbers are never re-used, so a cached epoch is never stale), and
/// whether a training failed here (not tried again by this process; searches scan).
final class LocalIVFState: Sendable {
    private struct State {
        var epochs: [UInt32: LocalIVFEpoch] = [:]
        var trainingFailed = false
    }

    private let state = Mutex(State())

    func epoch(_ number: UInt32, load: () throws -> LocalIVFEpoch?) rethrows -> LocalIVFEpoch? {
        if let cached = state.withLock({ $0.epochs[number] }) { return cached }
        guard let loaded = try load() else { return nil }
        state.withLock {
            // Only the epochs in use stay: at most a current one and one in training, and those just retired.
            if $0.epochs.count >= 4 { $0.epochs.removeAll() }
            $0.epochs[number] = loaded
        }
        return loaded
    }

    var trainingFailed: Bool {
        get { state.withLock { $0.trainingFailed } }
        set { state.withLock { $0.trainingFailed = newValue } }
    }
}
