import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// Shards starting together on a fresh database (a Kubernetes Indexed Job's first deployment): every one
/// prepares the same table at the same moment. PostgreSQL's `IF NOT EXISTS` is not atomic against a
/// concurrent creator (23505 on `pg_type_typname_nsp_index`, or 42P07), so preparation must be serialized.
@Suite(.serialized)
struct PgvectorConcurrentPrepareTests {
    @Test("many sinks preparing one fresh table at once all succeed, trial after trial, on a fresh database")
    func shardsPreparingAtOnce() async throws {
        let postgres = try await PostgresForTest.launch()
        defer { postgres.stop() }
        let identity = EmbedderIdentity(provider: "test", model: "m", dimensions: 4)
        let shards = 6
        for trial in 0..<12 {
            let table = "together_\(trial)"
            let sinks = try (0..<shards).map { _ in try PgvectorSink(settings: postgres.settings(table: table)) }
            let failures = await withTaskGroup(of: String?.self) { group in
                for sink in sinks {
                    group.addTask {
                        do {
                            try await sink.prepare(embedder: identity)
                            return nil
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                var failures: [String] = []
                for await failure in group { if let failure { failures.append(failure) } }
                return failures
            }
            #expect(failures.isEmpty, "trial \(trial): \(failures.joined(separator: "; "))")
            let info = try await sinks[0].info()
            #expect(info.exists)
            #expect(info.count == 0)
        }
    }
}
