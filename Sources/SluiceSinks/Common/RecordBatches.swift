import SluiceCore

/// Splits records into write batches bounded by count and by encoded bytes (each store's limits).
enum RecordBatches {
    /// Consecutive slices of `records`, each with at most `maxCount` records and at most `maxBytes` bytes
    /// as measured by `size` (a single record larger than `maxBytes` goes alone).
    static func split<T>(_ records: [T], maxCount: Int, maxBytes: Int, size: (T) -> Int) -> [ArraySlice<T>] {
        var out: [ArraySlice<T>] = []
        var start = 0
        var bytes = 0
        for (index, record) in records.enumerated() {
            let recordBytes = size(record)
            if index > start && (index - start >= maxCount || bytes + recordBytes > maxBytes) {
                out.append(records[start..<index])
                start = index
                bytes = 0
            }
            bytes += recordBytes
        }
        if start < records.count { out.append(records[start...]) }
        return out
    }

    /// A cheap upper estimate of a record's JSON size: text, key, metadata and ~12 bytes per float.
    static func estimatedJSONBytes(_ record: VectorRecord) -> Int {
        var bytes = 128 + record.text.utf8.count * 6 / 5 + record.documentKey.utf8.count + record.vector.count * 12
        for (key, value) in record.metadata { bytes += key.utf8.count + value.text.utf8.count + 8 }
        return bytes
    }
}
