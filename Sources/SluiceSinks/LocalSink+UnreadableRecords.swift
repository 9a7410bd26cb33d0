import SluiceCore
import SluiceLMDB

/// `sluice verify`'s look for the local store's records that do not decode (``LocalUnreadableRecords``).
extension LocalSink {
    /// Every record whose bytes do not decode, by a read of each (``VectorSink/unreadableRecords()``); each is
    /// noted in ``readNotice`` too.
    public func unreadableRecords() async throws -> [UnreadableRecord] {
        let environment = self.environment
        let unreadable = self.unreadable
        return try await readers.run {
            let vectors = try environment.database("vectors")
            var found: [UnreadableRecord] = []
            try environment.read { txn in
                try txn.forEach(vectors) { key, value in
                    do {
                        _ = try LocalSink.decode(id: Array(key), value)
                    } catch let error as SluiceError where error.code == .sinkFailed {
                        let record = LocalUnreadableRecords.unreadable(id: Array(key), value, error)
                        unreadable.note(record)
                        found.append(record)
                    }
                    return true
                }
            }
            return found
        }
    }
}
