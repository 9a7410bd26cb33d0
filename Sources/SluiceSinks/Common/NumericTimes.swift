import Foundation
import SluiceCore

/// Metadata for stores whose filters compare only numbers (Pinecone, Chroma): times are held as Unix
/// seconds, and the key `sluice_times` lists which keys were times, so that they read back as times.
enum NumericTimes {
    static let marker = "sluice_times"

    /// Times as Unix seconds; empty values left out (both stores refuse or drop them).
    static func encode(_ metadata: [String: MetadataValue]) -> [String: MetadataValue] {
        var out = metadata.filter { !$0.value.isEmpty }.mapValues(\.numericTimes)
        let times = metadata.filter { if case .time = $0.value { return true } else { return false } }.keys.sorted()
        if !times.isEmpty { out[marker] = .strings(times) }
        return out
    }

    /// The metadata as written: the marked keys' seconds as times again, the marker removed.
    static func decode(_ metadata: [String: MetadataValue]) -> [String: MetadataValue] {
        var out = metadata
        guard case .strings(let times) = out.removeValue(forKey: marker) else { return out }
        for key in times {
            if let seconds = out[key]?.number { out[key] = .time(Date(timeIntervalSince1970: seconds)) }
        }
        return out
    }
}
