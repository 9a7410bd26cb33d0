/// Where vectors are stored. Upserts and deletes must be idempotent.
public protocol VectorSink: Sendable {
    /// A short description for logs (`local:/path`), with no secrets.
    var name: String { get }
    /// Checks (or records, when empty) the dimension and embedder identity before any work is done.
    /// - Throws: ``SluiceError/Code/configuration`` on a mismatch.
    func prepare(embedder: EmbedderIdentity) async throws
    /// Writes records; returns once they are durable (acknowledged).
    func upsert(_ records: [VectorRecord]) async throws
    /// Deletes ids; ids that do not exist are ignored.
    func delete(_ ids: [VectorID]) async throws
    /// Number of stored vectors.
    func count() async throws -> Int
    /// Top-k by cosine similarity.
    func search(_ vector: [Float], k: Int) async throws -> [SearchHit]
    /// Every stored record, sorted by id.
    func exportAll(_ body: @Sendable (VectorRecord) throws -> Void) async throws
    /// Deletes everything (used when re-embedding with another model).
    func removeAll() async throws
}
