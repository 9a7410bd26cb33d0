import SluiceCore
import Synchronization

/// What a remote store that keeps no embedder identity of its own (Qdrant, Pinecone) has on record about
/// the embedder its vectors came from, as Sluice writes it there (docs/OPERATIONS.md, "A lost state,
/// re-sharding"), and whether a new state may therefore adopt its vectors.
///
/// Sluice records the identity when it creates the collection or namespace, or first writes to it while it
/// is empty; ``VectorSink/prepare(embedder:)`` compares it with the pipeline's: another embedder's record
/// over stored vectors is a mismatch (exit 1, as Chroma's collection metadata is), and stored vectors with no
/// record (written before Sluice recorded one, or by another tool) are kept and searched but never adopted.
final class StoreEmbedderRecord: Sendable {
    /// The metadata field (Qdrant) naming the embedder, in ``EmbedderIdentity/description``'s form.
    static let field = "sluice_embedder"
    /// The metadata field (Qdrant) holding the embedder's dimensions.
    static let dimensionsField = "sluice_dimensions"

    /// What ``VectorSink/prepare(embedder:)`` found.
    enum ReadBack: Sendable, Equatable {
        /// Not prepared yet: nothing is adopted.
        case unchecked
        /// The store's record names the pipeline's embedder (or the store was empty and now does).
        case allowed
        /// The store holds vectors without a record: why they are not adopted, said once by the run.
        case refused(String)
    }

    private let state = Mutex(ReadBack.unchecked)

    var readBack: ReadBack { state.withLock { $0 } }

    func set(_ readBack: ReadBack) { state.withLock { $0 = readBack } }

    /// Whether ``VectorSink/storedVectors(ofDocument:)`` may answer.
    var allowsReadBack: Bool { readBack == .allowed }

    /// The reason stored vectors are not adopted, for ``VectorSink/readBackRefusal``.
    var refusal: String? {
        if case .refused(let reason) = readBack { return reason }
        return nil
    }

    /// Compares the store's record with the one the pipeline's embedder would write, and notes whether the
    /// store's vectors may be adopted.
    /// - Parameters:
    ///   - recorded: the store's record, nil when it has none.
    ///   - expected: the pipeline's embedder's record.
    ///   - isEmpty: whether the collection or namespace holds no vector: its record is then this embedder's
    ///     from now on, whatever it said.
    ///   - what: the collection or namespace, for the refusal.
    ///   - mismatch: the error for stored vectors of another embedder's record.
    /// - Returns: whether the caller must write `expected` into the store (an empty store without it).
    func check(
        recorded: String?,
        expected: String,
        isEmpty: Bool,
        what: String,
        mismatch: () -> SluiceError
    ) throws -> Bool {
        if isEmpty {
            set(.allowed)
            return recorded != expected
        }
        guard let recorded else {
            set(.refused(Self.missingRecord(what)))
            return false
        }
        guard recorded == expected else { throw mismatch() }
        set(.allowed)
        return false
    }

    /// The refusal for `what` (a collection or namespace) holding vectors with no record.
    static func missingRecord(_ what: String) -> String {
        "\(what) holds vectors but no record of the embedder that made them (written before Sluice recorded it, or by another tool), so they are not adopted; `--reembed` once records it"
    }

    /// The mismatch error for `what` recorded as made by `recorded`.
    static func mismatch(_ what: String, recorded: String, embedder: EmbedderIdentity, other: String) -> SluiceError {
        SluiceError(
            .embedderMismatch,
            "\(what) holds vectors of \(recorded), not \(embedder); re-embed with --reembed or use another \(other)"
        )
    }
}
