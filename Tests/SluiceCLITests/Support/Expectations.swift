import Foundation
import SluiceCore
import Testing

/// Settings that make a run slow and fine-grained (one document and one chunk at a time), so that a
/// test can act on a run while it is under way.
let slowRunSettings = [
    "--set", "embed.batch=1", "--set", "embed.parallelism=1", "--set", "embed.linger_ms=0",
    "--set", "run.buffer=1", "--set", "extract.parallelism=1", "--set", "chunk.parallelism=1",
    "--set", "run.upsert_parallelism=1", "--set", "sink.batch=1",
]

/// Expects two exports to be the same bytes; if not, says which ids are missing, extra or different.
func expectSameExport(
    _ actual: Data,
    _ expected: Data,
    _ what: String,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    var detail = "\(what): exports differ (\(actual.count) bytes vs \(expected.count) expected)"
    if let a = try? Export.records(actual), let e = try? Export.records(expected) {
        let byIDActual = Dictionary(a.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let byIDExpected = Dictionary(e.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let missing = byIDExpected.keys.filter { byIDActual[$0] == nil }
        let extra = byIDActual.keys.filter { byIDExpected[$0] == nil }
        let changed = byIDExpected.keys.filter { id in byIDActual[id].map { $0 != byIDExpected[id]! } ?? false }
        detail +=
            "; records \(a.count) vs \(e.count); missing \(missing.count), extra \(extra.count), different \(changed.count)"
        for id in missing.prefix(3) {
            detail += "\n  missing \(id) (\(byIDExpected[id]!.documentKey) #\(byIDExpected[id]!.ordinal))"
        }
        for id in extra.prefix(3) {
            detail += "\n  extra   \(id) (\(byIDActual[id]!.documentKey) #\(byIDActual[id]!.ordinal))"
        }
        for id in changed.prefix(3) {
            detail += "\n  differs \(id) (\(byIDExpected[id]!.documentKey) #\(byIDExpected[id]!.ordinal))"
        }
    }
    Issue.record(Comment(rawValue: detail), sourceLocation: sourceLocation)
}

/// Sets a file's modification time without changing its bytes.
func touch(_ url: URL, secondsFromNow: Double = 5) throws {
    try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSinceNow: secondsFromNow)],
        ofItemAtPath: url.path
    )
}
