import SluiceCore
import Synchronization

/// The embedder record in the index's tags, and reading vectors back for a new or lost state
/// (``VectorSink/storedVectors(ofDocument:)``; docs/OPERATIONS.md, "A lost state, re-sharding").
///
/// Pinecone records only an index's dimension and metric, and an index holds many namespaces, each of which
/// Sluice may fill with another embedder of that dimension. So each namespace's embedder is an index tag
/// (`tags` when Sluice creates the index, `PATCH /indexes/{index}` to record it for an empty namespace), its
/// key named after a hash of the namespace; ``prepare(embedder:)`` compares it with the pipeline's. A tag's
/// key is at most 80 characters of letters, digits, `_` and `-`, its value at most 120 of letters, digits and
/// `;@_-.+ `, so the identity is written with `+HH` escapes, or as its SHA-256 when that is longer.
///
/// A document's vectors are found without a vector query: its record ids start with `documentKey#`
/// (``recordID(key:id:)``), so `list` by that prefix (serverless indexes, as Sluice creates) names them, and
/// `fetch` returns their values; a record whose `document_key` is another document's (a key cut to 440 bytes,
/// or one that continues with `#`) is left out.
extension PineconeSink {
    /// The tag naming this namespace's embedder: `sluice-embedder-` and 24 hex digits of its SHA-256.
    var embedderTagKey: String {
        "sluice-embedder-" + String(SHA256.hex(SHA256.digest(Array(settings.namespace.utf8))).prefix(24))
    }

    /// The identity as a tag value: letters, digits, `@`, `.` and `-` as they are, other bytes as `+HH`;
    /// `sha256;` and the hex digest when that is longer than Pinecone's 120 characters.
    static func embedderTagValue(_ embedder: EmbedderIdentity) -> String {
        var out = ""
        for byte in embedder.description.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "@"), UInt8(ascii: "."), UInt8(ascii: "-"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "+" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        guard out.count <= 120 else {
            return "sha256;" + SHA256.hex(SHA256.digest(Array(embedder.description.utf8)))
        }
        return out
    }

    /// The identity a tag value names, for `sluice sink info`; nil for a digest or a value Sluice did not write.
    static func embedder(tagValue: String) -> String? {
        guard !tagValue.hasPrefix("sha256;") else { return nil }
        var bytes: [UInt8] = []
        var rest = Substring(tagValue)
        while let first = rest.first {
            if first == "+" {
                guard let byte = UInt8(rest.dropFirst().prefix(2), radix: 16), rest.count >= 3 else { return nil }
                bytes.append(byte)
                rest = rest.dropFirst(3)
            } else {
                bytes += Array(String(first).utf8)
                rest = rest.dropFirst()
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Compares the namespace's record with the pipeline's embedder (the index already has its dimension).
    /// - Throws: ``SluiceError/Code/embedderMismatch`` when the namespace holds another embedder's vectors.
    func checkEmbedderRecord(_ recorded: String?, embedder: EmbedderIdentity) async throws {
        let value = Self.embedderTagValue(embedder)
        let namespace = settings.namespace.isEmpty ? "(default)" : settings.namespace
        let what = "pinecone index \(settings.index), namespace \(namespace),"
        let write = try embedderRecord.check(
            recorded: recorded,
            expected: value,
            isEmpty: try await count() == 0,
            what: what
        ) {
            StoreEmbedderRecord.mismatch(
                what,
                recorded: recorded.flatMap(Self.embedder(tagValue:)) ?? "another embedder",
                embedder: embedder,
                other: "sink.namespace"
            )
        }
        guard write else { return }
        struct Configure: Encodable { var tags: [String: String] }
        try await control.send(
            "PATCH",
            "/indexes/\(StoreHTTP.segment(settings.index))",
            json: try StoreHTTP.encode(Configure(tags: [embedderTagKey: value]))
        )
    }

    public var readBackRefusal: String? { embedderRecord.refusal }

    public func storedVectors(ofDocument key: String) async throws -> [VectorID: [Float]]? {
        guard embedderRecord.allowsReadBack else { return nil }
        let prefix = Self.recordID(key: key, id: VectorID(rawValue: ""))
        let recordIDs = try await listRecordIDs(prefix: prefix)
        guard !recordIDs.isEmpty else { return [:] }
        var out: [VectorID: [Float]] = [:]
        var learned: [VectorID: String] = [:]
        for vector in try await fetch(recordIDs) where vector.metadata?["document_key"]?.text == key {
            guard let values = vector.values else {
                throw SluiceError(.sinkFailed, "pinecone fetch: no values returned for \(vector.id)")
            }
            let id = Self.vectorID(vector.id)
            out[id] = values
            learned[id] = vector.id
        }
        let known = learned
        state.withLock { $0.listed.merge(known) { $1 } }
        return out
    }
}
