import CHNSW
import Foundation

/// How the local store's IVF index (`sink.local_index: ivf`, docs/LOCAL_INDEX.md) lies in LMDB. Three
/// databases, all written in the records' own write transactions:
///
/// - `ivf`: `current` → the epoch searches use; `building` → an epoch being trained (its lists are written in
///   bounded commits, and every write of the store keeps it up to date meanwhile); `progress/<epoch>` → the
///   next label the training fills in; `retired/<epoch>` → an epoch whose entries are to be deleted;
///   `next-epoch`; `labels` (present while every record has a label in `ann`, which the lists are keyed by);
///   `relabelling` → the next record key to label, while records are given labels in bounded commits;
///   `centroids/<epoch>` → ``LocalIVFEpoch``; `size/<epoch><list>` → the entries in that list.
/// - `ivf-lists`: `epoch + list + block` (three big-endian `UInt32`) → up to ``blockEntries`` entries, each
///   a label (`UInt32`, little-endian) and the vector's 8-bit code (a float scale and one signed byte a
///   dimension, as the graph quantizes): 3,920 bytes at 384 dimensions, one overflow page.
/// - `ivf-where`: `epoch + label` → `list + block + slot`, so that a delete finds its entry.
enum LocalIVFLayout {
    static let database = "ivf"
    static let listsDatabase = "ivf-lists"
    static let whereDatabase = "ivf-where"

    /// Entries in one block (one LMDB value).
    static let blockEntries = 10

    static let current = Array("current".utf8)
    static let building = Array("building".utf8)
    static let nextEpoch = Array("next-epoch".utf8)
    static let labels = Array("labels".utf8)
    /// `relabelling` → the key of the next record to give a label (empty: the first): a relabelling under way,
    /// in bounded commits (`LocalSink+IVFRelabel.swift`).
    static let relabelling = Array("relabelling".utf8)
    /// `retired/<epoch>`: an epoch no longer searched or kept, whose entries the next writer deletes.
    static let retiredPrefix = Array("retired/".utf8)

    static func centroidsKey(_ epoch: UInt32) -> [UInt8] { Array("centroids/".utf8) + bigEndian(epoch) }
    static func progressKey(_ epoch: UInt32) -> [UInt8] { Array("progress/".utf8) + bigEndian(epoch) }
    static func sizeKey(_ epoch: UInt32, list: UInt32) -> [UInt8] {
        Array("size/".utf8) + bigEndian(epoch) + bigEndian(list)
    }
    static func sizePrefix(_ epoch: UInt32) -> [UInt8] { Array("size/".utf8) + bigEndian(epoch) }

    static func blockKey(_ epoch: UInt32, list: UInt32, block: UInt32) -> [UInt8] {
        bigEndian(epoch) + bigEndian(list) + bigEndian(block)
    }
    static func listPrefix(_ epoch: UInt32, list: UInt32) -> [UInt8] { bigEndian(epoch) + bigEndian(list) }
    static func whereKey(_ epoch: UInt32, label: UInt32) -> [UInt8] { bigEndian(epoch) + bigEndian(label) }

    /// Bytes of one entry: the label, then the code.
    static func entryBytes(dimensions: Int) -> Int { 4 + sluice_ivf_code_bytes(dimensions) }

    /// One entry: `label` and the 8-bit code of `vector`.
    static func entry(label: UInt32, vector: [Float]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: entryBytes(dimensions: vector.count))
        withUnsafeBytes(of: label.littleEndian) { bytes.replaceSubrange(0..<4, with: $0) }
        bytes.withUnsafeMutableBufferPointer { out in
            vector.withUnsafeBufferPointer { sluice_ivf_encode($0.baseAddress, vector.count, out.baseAddress! + 4) }
        }
        return bytes
    }

    /// The label of the entry starting at `offset`.
    static func label(in bytes: UnsafeRawBufferPointer, at offset: Int) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    static func uint32(_ bytes: some Collection<UInt8>, at offset: Int = 0) -> UInt32 {
        bytes.dropFirst(offset).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
    }
}

/// A place in the lists: the list, its block, the slot in the block.
struct LocalIVFPlace: Hashable {
    var list: UInt32
    var block: UInt32
    var slot: UInt32

    var bytes: [UInt8] {
        LocalIVFLayout.bigEndian(list) + LocalIVFLayout.bigEndian(block) + LocalIVFLayout.bigEndian(slot)
    }

    init(list: UInt32, block: UInt32, slot: UInt32) {
        (self.list, self.block, self.slot) = (list, block, slot)
    }

    init?(_ bytes: [UInt8]) {
        guard bytes.count == 12 else { return nil }
        (list, block, slot) = (
            LocalIVFLayout.uint32(bytes), LocalIVFLayout.uint32(bytes, at: 4), LocalIVFLayout.uint32(bytes, at: 8)
        )
    }

    /// The place of the `position`th entry of a list (from 0).
    init(list: UInt32, position: Int) {
        self.init(
            list: list,
            block: UInt32(position / LocalIVFLayout.blockEntries),
            slot: UInt32(position % LocalIVFLayout.blockEntries)
        )
    }
}
