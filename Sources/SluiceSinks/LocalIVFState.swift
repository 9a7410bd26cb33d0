import Synchronization

/// What this process keeps of the IVF index: the centroids of the epochs it has read (an epoch's centroids
/// never change once written, and epoch numbers are never re-used, so a cached epoch is never stale), and
/// whether a training failed here (not tried again by this process; searches scan); for the benchmark, an
/// `nprobe` fixed for this process and the lists and codes its searches scanned; and the thread that trains.
final class LocalIVFState: Sendable {
    /// Trains, fills and retires epochs while the writer writes (`LocalSink+IVFTraining.swift`).
    let trainer = LocalIVFTrainer()

    private struct State {
        var epochs: [UInt32: LocalIVFEpoch] = [:]
        var trainingFailed = false
        var probes: Int?
        var scanned = LocalIVFScanCounts()
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

    /// An `nprobe` fixed for this process (``LocalSink/setProbes(_:)``), else the setting's.
    var probes: Int? {
        get { state.withLock { $0.probes } }
        set { state.withLock { $0.probes = newValue } }
    }

    /// What the IVF searches of this process scanned so far.
    var scanned: LocalIVFScanCounts { state.withLock { $0.scanned } }

    /// Counts one search that probed `lists` lists holding `codes` codes.
    func count(lists: Int, codes: Int) {
        state.withLock {
            $0.scanned.searches += 1
            $0.scanned.lists += lists
            $0.scanned.codes += codes
        }
    }

    var trainingFailed: Bool {
        get { state.withLock { $0.trainingFailed } }
        set { state.withLock { $0.trainingFailed = newValue } }
    }
}
