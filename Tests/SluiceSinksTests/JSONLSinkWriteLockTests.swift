import Foundation
import SluiceCore
import Testing

@testable import SluiceSinks

/// One writer at a time on a JSONL store (session 47's campaign: two shards started together into one
/// store each rewrote its files from their own copy, losing the other's vectors while both exited 0).
@Suite struct JSONLSinkWriteLockTests {
    @Test(arguments: ["vectors.jsonl", "parts"])
    func aSecondWriterIsRefusedReadersAreNot(name: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("jsonl-lock-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(name)
        var first: JSONLSink? = try JSONLSink(path: path, shards: 2)
        let error = try #require(throws: SluiceError.self) { try JSONLSink(path: path, shards: 2) }
        #expect(error.code == .lockHeld)
        #expect(RunExitCode(for: error) == .lockHeld)
        // Readers (export, search, serve) take no lock.
        _ = try JSONLSink(path: path, shards: 2, readOnly: true)
        withExtendedLifetime(first) {}
        first = nil
        _ = try JSONLSink(path: path, shards: 2)
    }
}
