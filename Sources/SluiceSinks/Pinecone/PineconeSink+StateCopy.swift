import Foundation
import SluiceCore

/// The copy of one state's generation manifest kept in the index, for a Pinecone store without a coordination
/// store (docs/GENERATIONS.md, "How it is stored"): a new or lost state follows the index's generations from
/// it rather than going back to the pipeline file's settings and the original namespace.
///
/// It is one record in the namespace ``stateCopyNamespace`` of the same index, its id named after a hash of the
/// pipeline's namespace (several pipelines may share an index), the manifest in its metadata (a few hundred
/// bytes against Pinecone's 40 KB a record) and a vector of the index's dimension that is never queried. One
/// state writes it, unconditionally: no conditional write is needed, which Pinecone has none of (the reason a
/// sharded deployment needs a coordination store). A read soon after a write may see the copy before it
/// (Pinecone's reads are eventually consistent); the copy is a recovery aid, read by a new state's first run.
extension PineconeSink {
    /// The namespace that holds every pipeline's copy in the index.
    package static let stateCopyNamespace = "sluice-generations"

    /// The copy's record id: `one-state-manifest-` and 24 hex digits of the pipeline's namespace's SHA-256.
    var stateCopyID: String {
        "one-state-manifest-" + String(SHA256.hex(SHA256.digest(Array(settings.namespace.utf8))).prefix(24))
    }

    /// The copy's bytes; nil when there is none (or the index does not exist yet).
    package func stateCopy() async throws -> Data? {
        let copy = try await fetch([stateCopyID], namespace: Self.stateCopyNamespace).first { $0.id == stateCopyID }
        guard case .string(let text)? = copy?.metadata?["manifest"] else { return nil }
        return Data(text.utf8)
    }

    /// Writes the copy (nothing before the index exists: the first run creates it).
    package func saveStateCopy(_ manifest: Data) async throws {
        guard let description = try await describeIndex(), let dimension = description.dimension, dimension > 0
        else { return }
        // A dense vector must hold a value other than zero; this one is never queried.
        var values = [Float](repeating: 0, count: dimension)
        values[0] = 1
        let record = Vector(
            id: stateCopyID,
            values: values,
            metadata: ["manifest": .string(String(decoding: manifest, as: UTF8.self))]
        )
        try await upsert([record], namespace: Self.stateCopyNamespace, try await requireData())
    }
}
