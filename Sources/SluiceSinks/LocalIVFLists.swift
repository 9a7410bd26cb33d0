import Foundation
import SluiceCore
import SluiceLMDB

/// The IVF index's lists inside one write transaction (layout in ``LocalIVFLayout``): an insert appends to
/// the list's last block (a new block when it is full), a delete moves the list's last entry into the hole
/// (two blocks at most), and `ivf-where` follows both. Every list is dense: its `n` entries fill positions
/// 0..<n, ten to a block.
struct LocalIVFLists {
    let ivf: LMDBDatabase
    let lists: LMDBDatabase
    let places: LMDBDatabase

    init(environment: LMDBEnvironment) throws {
        ivf = try environment.database(LocalIVFLayout.database)
        lists = try environment.database(LocalIVFLayout.listsDatabase)
        places = try environment.database(LocalIVFLayout.whereDatabase)
    }

    /// The entries in `list` of `epoch`.
    func size(_ epoch: UInt32, list: UInt32, _ txn: LMDBTransaction) throws -> Int {
        try txn.get(ivf, LocalIVFLayout.sizeKey(epoch, list: list)).map { Int(LocalIVFLayout.uint32($0)) } ?? 0
    }

    private func setSize(_ size: Int, _ epoch: UInt32, list: UInt32, _ txn: LMDBTransaction) throws {
        let key = LocalIVFLayout.sizeKey(epoch, list: list)
        if size == 0 {
            try txn.delete(ivf, key)
        } else {
            try txn.put(ivf, key, LocalIVFLayout.bigEndian(UInt32(size)))
        }
    }

    /// Where `label` is in `epoch`, if anywhere.
    func place(_ epoch: UInt32, label: UInt32, _ txn: LMDBTransaction) throws -> LocalIVFPlace? {
        try txn.get(places, LocalIVFLayout.whereKey(epoch, label: label)).flatMap(LocalIVFPlace.init)
    }

    /// Appends `entry` (``LocalIVFLayout/entry(label:vector:)``) for `label` to `list`.
    func insert(_ entry: [UInt8], label: UInt32, list: UInt32, _ epoch: UInt32, _ txn: LMDBTransaction) throws {
        let size = try size(epoch, list: list, txn)
        let place = LocalIVFPlace(list: list, position: size)
        let key = LocalIVFLayout.blockKey(epoch, list: list, block: place.block)
        var block = place.slot == 0 ? [] : try txn.get(lists, key) ?? []
        guard block.count == Int(place.slot) * entry.count else {
            throw SluiceError(.sinkFailed, "the IVF index's list \(list) of epoch \(epoch) is damaged")
        }
        block += entry
        try txn.put(lists, key, block)
        try txn.put(places, LocalIVFLayout.whereKey(epoch, label: label), place.bytes)
        try setSize(size + 1, epoch, list: list, txn)
    }

    /// Removes `label`'s entry from `epoch`, moving its list's last entry into the hole. Returns whether
    /// it was there.
    @discardableResult
    func remove(label: UInt32, entryBytes: Int, _ epoch: UInt32, _ txn: LMDBTransaction) throws -> Bool {
        let whereKey = LocalIVFLayout.whereKey(epoch, label: label)
        guard let hole = try txn.get(places, whereKey).flatMap(LocalIVFPlace.init) else { return false }
        let size = try size(epoch, list: hole.list, txn)
        let last = LocalIVFPlace(list: hole.list, position: size - 1)
        let lastKey = LocalIVFLayout.blockKey(epoch, list: hole.list, block: last.block)
        guard size > 0, var lastBlock = try txn.get(lists, lastKey),
            lastBlock.count == (Int(last.slot) + 1) * entryBytes
        else { throw SluiceError(.sinkFailed, "the IVF index's list \(hole.list) of epoch \(epoch) is damaged") }
        if hole != last {
            let moved = Array(lastBlock[(Int(last.slot) * entryBytes)...])
            let movedLabel = moved.withUnsafeBytes { LocalIVFLayout.label(in: $0, at: 0) }
            let holeRange = (Int(hole.slot) * entryBytes)..<(Int(hole.slot) + 1) * entryBytes
            if hole.block == last.block {
                lastBlock.replaceSubrange(holeRange, with: moved)
            } else {
                let holeKey = LocalIVFLayout.blockKey(epoch, list: hole.list, block: hole.block)
                guard var holeBlock = try txn.get(lists, holeKey), holeBlock.count >= holeRange.upperBound else {
                    throw SluiceError(.sinkFailed, "the IVF index's list \(hole.list) of epoch \(epoch) is damaged")
                }
                holeBlock.replaceSubrange(holeRange, with: moved)
                try txn.put(lists, holeKey, holeBlock)
            }
            try txn.put(places, LocalIVFLayout.whereKey(epoch, label: movedLabel), hole.bytes)
        }
        lastBlock.removeLast(entryBytes)
        if lastBlock.isEmpty {
            try txn.delete(lists, lastKey)
        } else {
            try txn.put(lists, lastKey, lastBlock)
        }
        try txn.delete(places, whereKey)
        try setSize(size - 1, epoch, list: hole.list, txn)
        return true
    }
}
