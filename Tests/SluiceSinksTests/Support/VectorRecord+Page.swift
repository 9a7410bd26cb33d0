import SluiceCore

extension VectorRecord {
    /// A record of the local store's tests: `id`, its document `<id>.txt`, ordinal 0, on page 1.
    static func onPageOne(_ id: String, _ text: String, _ vector: [Float]) -> VectorRecord {
        VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: "\(id).txt",
            ordinal: 0,
            text: text,
            vector: vector,
            metadata: ["page": .int(1)]
        )
    }
}
