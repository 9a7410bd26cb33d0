import Foundation
import SluiceLMDB

extension LocalIVFLists {
    /// What is wrong with `epoch`'s lists, given the store's `labels` (every record's label): empty when
    /// every label is in exactly one slot, `ivf-where` says that slot, each list is dense (full blocks, then
    /// its last) and its size is what `size/` says; a trained epoch (`complete`) holds every label, one in
    /// training a subset of them. For tests and `sluice verify`-like checks.
    func problems(
        _ epoch: UInt32,
        labels: Set<UInt32>,
        complete: Bool,
        entryBytes: Int,
        _ txn: LMDBTransaction
    ) throws -> [String] {
        var problems: [String] = []
        var seen: [UInt32: LocalIVFPlace] = [:]
        var sizes: [UInt32: Int] = [:]
        let prefix = LocalIVFLayout.bigEndian(epoch)
        try txn.forEach(lists, from: prefix) { key, value in
            guard key.count == 12, key.starts(with: prefix) else { return false }
            let list = LocalIVFLayout.uint32(key, at: 4)
            let block = LocalIVFLayout.uint32(key, at: 8)
            guard value.count > 0, value.count % entryBytes == 0 else {
                problems.append("list \(list) block \(block): \(value.count) bytes")
                return true
            }
            let entries = value.count / entryBytes
            if Int(block) * LocalIVFLayout.blockEntries != sizes[list, default: 0] {
                problems.append("list \(list) block \(block) follows a block that is not full, or a gap")
            }
            sizes[list, default: 0] = Int(block) * LocalIVFLayout.blockEntries + entries
            for slot in 0..<entries {
                let label = LocalIVFLayout.label(in: value, at: slot * entryBytes)
                let place = LocalIVFPlace(list: list, block: block, slot: UInt32(slot))
                if let other = seen[label] { problems.append("label \(label) in two slots: \(other) and \(place)") }
                seen[label] = place
            }
            return true
        }
        for (label, place) in seen {
            let recorded = try self.place(epoch, label: label, txn)
            if recorded != place {
                problems.append("label \(label) at \(place), ivf-where says \(String(describing: recorded))")
            }
            if !labels.contains(label) { problems.append("label \(label) is no record's") }
        }
        if complete {
            for label in labels where seen[label] == nil { problems.append("label \(label) is in no list") }
        }
        var recordedPlaces = 0
        let wherePrefix = LocalIVFLayout.bigEndian(epoch)
        try txn.forEach(places, from: wherePrefix) { key, _ in
            guard key.starts(with: wherePrefix) else { return false }
            recordedPlaces += 1
            return true
        }
        if recordedPlaces != seen.count {
            problems.append("ivf-where holds \(recordedPlaces) places for \(seen.count) entries")
        }
        var recordedSizes: [UInt32: Int] = [:]
        let sizePrefix = LocalIVFLayout.sizePrefix(epoch)
        try txn.forEach(ivf, from: sizePrefix) { key, value in
            guard key.starts(with: sizePrefix) else { return false }
            recordedSizes[LocalIVFLayout.uint32(key, at: sizePrefix.count)] = Int(LocalIVFLayout.uint32(value))
            return true
        }
        if recordedSizes != sizes { problems.append("sizes \(recordedSizes), lists hold \(sizes)") }
        return problems
    }
}
