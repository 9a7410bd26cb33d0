import Foundation
import SluiceCore
import SluiceLMDB

/// The local store's IVF index (`sink.local_index: ivf`, docs/LOCAL_INDEX.md; layout in ``LocalIVFLayout``):
/// inverted lists of 8-bit codes in LMDB, written in the records' own write transactions, so that a reader
/// sees index and records at one generation and a `kill -9` leaves nothing to repair. Its memory is the
/// centroids.
///
/// - Every write with `ivf` keeps the records' labels (`ann`, as the graph's) and applies the same change to
///   each live epoch (the `current` one and one in training): an upserted label leaves its old slot and joins
///   the list of its nearest centroid, a deleted one leaves its slot.
/// - A write that does not keep the lists (another `local_index`) retires their epochs (their entries are
///   deleted in bounded commits by the next writer with `ivf`, which trains anew), and one that does not
///   keep the labels either (`exact`, a graph that could not follow) drops the `labels` mark: the next
///   training gives every record a label first.
/// - Training, retraining and retiring: `LocalSink+IVFTraining.swift`; searching: `LocalSink+IVFSearch.swift`.
extension LocalSink {
    var ivfIndexed: Bool { indexSettings.kind == .ivf && !readOnly }

    /// The epochs a write must keep up to date: the current one and one in training.
    func ivfLiveEpochs(_ txn: LMDBTransaction) throws -> [LocalIVFEpoch] {
        let ivf = try environment.database(LocalIVFLayout.database)
        var epochs: [LocalIVFEpoch] = []
        for key in [LocalIVFLayout.current, LocalIVFLayout.building] {
            guard let number = try txn.get(ivf, key).map({ LocalIVFLayout.uint32($0) }) else { continue }
            if let epoch = try ivfEpoch(number, txn) { epochs.append(epoch) }
        }
        return epochs
    }

    /// The centroids of `number` (cached: they never change).
    func ivfEpoch(_ number: UInt32, _ txn: LMDBTransaction) throws -> LocalIVFEpoch? {
        let ivf = try environment.database(LocalIVFLayout.database)
        return try ivfState.epoch(number) {
            try txn.get(ivf, LocalIVFLayout.centroidsKey(number)).flatMap { LocalIVFEpoch(epoch: number, encoded: $0) }
        }
    }

    /// In an upsert's write transaction: moves each label to the list of its vector's nearest centroid, in
    /// every live epoch.
    func ivfUpsert(_ adds: [(label: UInt64, vector: [Float])], _ txn: LMDBTransaction) throws {
        let epochs = try ivfLiveEpochs(txn)
        guard !epochs.isEmpty else { return }
        let lists = try LocalIVFLists(environment: environment)
        for epoch in epochs {
            let entryBytes = LocalIVFLayout.entryBytes(dimensions: epoch.dimensions)
            for (label, vector) in adds {
                guard vector.count == epoch.dimensions else {
                    throw SluiceError(
                        .sinkFailed,
                        "a vector of \(vector.count) dimensions for an IVF index of \(epoch.dimensions)"
                    )
                }
                let label = UInt32(truncatingIfNeeded: label)
                try lists.remove(label: label, entryBytes: entryBytes, epoch.epoch, txn)
                try lists.insert(
                    LocalIVFLayout.entry(label: label, vector: vector),
                    label: label,
                    list: epoch.nearest(vector),
                    epoch.epoch,
                    txn
                )
            }
        }
    }

    /// In a delete's write transaction: removes the freed labels from every live epoch.
    func ivfDelete(_ labels: [UInt64], _ txn: LMDBTransaction) throws {
        let epochs = try ivfLiveEpochs(txn)
        guard !epochs.isEmpty else { return }
        let lists = try LocalIVFLists(environment: environment)
        for epoch in epochs {
            let entryBytes = LocalIVFLayout.entryBytes(dimensions: epoch.dimensions)
            for label in labels {
                try lists.remove(label: UInt32(truncatingIfNeeded: label), entryBytes: entryBytes, epoch.epoch, txn)
            }
        }
    }

    /// In a write that does not keep the lists: retires the live epochs, and drops the `labels` mark unless
    /// the write keeps the labels. Costs one read when there is no IVF index.
    func ivfInvalidate(keepingLabels: Bool, _ txn: LMDBTransaction) throws {
        let ivf = try environment.database(LocalIVFLayout.database)
        for key in [LocalIVFLayout.current, LocalIVFLayout.building] {
            guard let number = try txn.get(ivf, key) else { continue }
            try txn.put(ivf, LocalIVFLayout.retiredPrefix + number, [])
            try txn.delete(ivf, key)
        }
        guard !keepingLabels else { return }
        // A relabelling under way would not see this write's records: the next one starts from the first.
        try txn.delete(ivf, LocalIVFLayout.labels)
        try txn.delete(ivf, LocalIVFLayout.relabelling)
    }

    /// In the transaction that empties the store: every list and place goes; epoch numbers are not re-used.
    /// An empty store's every record has a label.
    func ivfClear(_ txn: LMDBTransaction) throws {
        let ivf = try environment.database(LocalIVFLayout.database)
        let next = try txn.get(ivf, LocalIVFLayout.nextEpoch)
        try txn.drop(ivf)
        try txn.drop(try environment.database(LocalIVFLayout.listsDatabase))
        try txn.drop(try environment.database(LocalIVFLayout.whereDatabase))
        if let next { try txn.put(ivf, LocalIVFLayout.nextEpoch, next) }
        try txn.put(ivf, LocalIVFLayout.labels, [])
    }

    /// Facts of the IVF index for `sluice status` and `check`: the current epoch, its lists, the vectors it
    /// was trained on, the entries its lists hold, and an epoch in training with the next label it fills.
    func ivfDetails() throws -> [String: String] {
        guard indexSettings.kind == .ivf, let ivf = try environment.existingDatabase(LocalIVFLayout.database) else {
            return [:]
        }
        return try environment.read { txn in
            var details: [String: String] = [:]
            if let number = try txn.get(ivf, LocalIVFLayout.current).map({ LocalIVFLayout.uint32($0) }),
                let epoch = try ivfEpoch(number, txn)
            {
                details["ivf_epoch"] = String(number)
                details["ivf_lists"] = String(epoch.lists)
                details["ivf_trained_on"] = String(epoch.trainedOn)
                // Every record's once trained (one key a list: nlist reads).
                var entries = 0
                let prefix = LocalIVFLayout.sizePrefix(number)
                try txn.forEach(ivf, from: prefix) { key, value in
                    guard key.starts(with: prefix) else { return false }
                    entries += Int(LocalIVFLayout.uint32(value))
                    return true
                }
                details["ivf_entries"] = String(entries)
            } else {
                details["ivf_epoch"] = "none (searches scan)"
            }
            if let building = try txn.get(ivf, LocalIVFLayout.building).map({ LocalIVFLayout.uint32($0) }) {
                details["ivf_training"] = String(building)
                if let next = try txn.get(ivf, LocalIVFLayout.progressKey(building)).map(Self.number) {
                    details["ivf_training_progress"] = String(next)
                }
            }
            return details
        }
    }
}
