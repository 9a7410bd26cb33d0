import Foundation
import SluiceCore
import Synchronization

/// Reading vectors back for a new or lost state (``VectorSink/storedVectors(ofDocument:)``): the records
/// are in memory by id, so the first call decodes each line's document key once (``DocumentKeyIndex``),
/// on the sink's own thread, where its writes run too.
extension JSONLSink {
    /// The part of a line the scan reads: its document key (spelled as ``VectorRecord`` reads it).
    private struct LineKey: Decodable {
        var documentKey: String
        enum CodingKeys: String, CodingKey {
            case documentKey = "document_key"
            case legacyDocumentKey = "documentKey"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            documentKey =
                try container.decodeIfPresent(String.self, forKey: .documentKey)
                ?? container.decode(String.self, forKey: .legacyDocumentKey)
        }
    }

    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        try await executor.run { [self] in
            let lines = state.withLock { $0.lines }
            let decoder = JSONDecoder()
            let ids = try documentKeys.ids(of: key) { add in
                for (id, line) in lines { add(id, try decoder.decode(LineKey.self, from: line).documentKey) }
            }
            var out: [VectorID: [Float]] = [:]
            for id in ids {
                guard let line = lines[id] else { continue }
                out[id] = try decoder.decode(VectorRecord.self, from: line).vector
            }
            return out
        }
    }
}
