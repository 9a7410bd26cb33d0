import SluiceCore

/// One commit of an upsert into the local store, prepared on the caller's task (its keyword segment and
/// encoded records) and waiting for the writer thread (``GroupCommit``).
struct LocalWrite: Sendable {
    let records: [VectorRecord]
    let batch: KeywordIndex.PreparedBatch
    let encoded: ArraySlice<[UInt8]>
}
