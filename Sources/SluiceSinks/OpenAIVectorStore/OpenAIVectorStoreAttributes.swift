import Foundation
import SluiceCore

/// A record's metadata as an OpenAI vector store file's `attributes`, within the API's limits: at most
/// 16 keys, keys of at most 64 characters, values that are strings of at most 512 characters, numbers or
/// booleans.
///
/// The sink writes its own keys first: `sluice_id` (the record's ``VectorID``), `document_key`,
/// `ordinal`, and, when the metadata holds times, `sluice_times` (their keys, comma-separated). Times are
/// held as Unix seconds, so that a range filter compares them as numbers. Then the chunk's metadata, by
/// key name, until 16 keys: a list (`headings`, `folders`), a string longer than 512 characters, a key
/// longer than 64 characters or one past the sixteenth is dropped (``Encoded/dropped`` names them).
/// A document key longer than 512 characters is cut at 512 (the record is still found by `sluice_id`).
enum OpenAIVectorStoreAttributes {
    static let maxKeys = 16
    static let maxKeyLength = 64
    static let maxStringLength = 512

    static let idKey = "sluice_id"
    static let timesKey = NumericTimes.marker
    /// Keys the sink writes itself, which no filter may name (except the built-in fields).
    static let reservedKeys: Set<String> = [idKey, timesKey]

    struct Encoded: Sendable {
        var attributes: [String: MetadataValue]
        /// Metadata keys left out, sorted.
        var dropped: [String]
    }

    static func encode(_ record: VectorRecord) -> Encoded {
        var attributes: [String: MetadataValue] = [
            idKey: .string(record.id.rawValue),
            SearchFilter.documentKeyField: .string(String(record.documentKey.prefix(maxStringLength))),
            SearchFilter.ordinalField: .int(record.ordinal),
        ]
        let metadata = record.metadata.filter {
            !$0.value.isEmpty && !reservedKeys.contains($0.key) && attributes[$0.key] == nil
        }
        var times: [String] = []
        var dropped: [String] = []
        for key in metadata.keys.sorted() {
            let original = metadata[key]!
            let isTime: Bool
            if case .time = original { isTime = true } else { isTime = false }
            let value = original.numericTimes
            let fits: Bool
            switch value {
            case .string(let text): fits = text.count <= maxStringLength
            case .int, .double, .bool: fits = true
            case .strings, .time: fits = false
            }
            // A time needs the marker too: one more key the first time, and room in its 512 characters.
            let needed = 1 + (isTime && times.isEmpty ? 1 : 0)
            let marker = (times + [key]).joined(separator: ",")
            if fits, key.count <= maxKeyLength, !key.contains(","), attributes.count + needed <= maxKeys,
                !isTime || marker.count <= maxStringLength
            {
                attributes[key] = value
                if isTime {
                    times.append(key)
                    attributes[timesKey] = .string(marker)
                }
            } else {
                dropped.append(key)
            }
        }
        return Encoded(attributes: attributes, dropped: dropped)
    }

    /// The record a file's attributes and text describe (no vector: the store keeps its own).
    static func record(attributes: [String: MetadataValue], text: String, fileID: String) -> VectorRecord {
        var metadata = attributes
        let id = metadata.removeValue(forKey: idKey)?.text ?? fileID
        let key = metadata.removeValue(forKey: SearchFilter.documentKeyField)?.text ?? ""
        let ordinal = metadata.removeValue(forKey: SearchFilter.ordinalField).flatMap { $0.number }.map { Int($0) } ?? 0
        if case .string(let marker) = metadata.removeValue(forKey: timesKey) {
            for key in marker.split(separator: ",").map(String.init) {
                if let seconds = metadata[key]?.number { metadata[key] = .time(Date(timeIntervalSince1970: seconds)) }
            }
        }
        return VectorRecord(
            id: VectorID(rawValue: id),
            documentKey: key,
            ordinal: ordinal,
            text: text,
            vector: [],
            metadata: metadata
        )
    }
}
