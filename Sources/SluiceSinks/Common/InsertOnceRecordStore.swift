import Foundation
import SluiceCore

/// A store whose only conditional write is an insert of a new id: a record is written under an id only when
/// no record has that id (Chroma's `add` leaves a record that exists as it is; Qdrant's upsert with an
/// `update_filter` that no existing point matches). On it, ``SharedGenerationRecords`` are kept as one
/// record per version of a key, `<key>@<version>`, never rewritten:
///
/// - the record under a key is its highest version;
/// - a write expecting version `v` inserts `<key>@<v+1>` with a token of its own (`writer`), then reads that
///   id back: it was made when the record there carries its token. Two writers expecting the same version
///   insert the same id, and the store keeps exactly one of them; the other reads the winner's token back
///   and reports the loss (nothing of it was written). A write retried after a lost answer finds its own
///   token: it was made once.
/// - a write expecting nothing (a shard's part, which only that shard writes) expects the version it reads,
///   and deletes the versions below the one it wrote. The versions of a key written conditionally (the
///   manifest) are kept: deleting `<key>@<v>` would let a writer that read `v-1` long ago insert it again
///   and believe it won.
///
/// These stores have no lock that a killed holder releases, so ``deploymentLock(shared:)`` is nil: the
/// conditional write of the manifest, and the parts tagged with the manifest version they were built under,
/// keep a change safe against shards running meanwhile (docs/GENERATIONS.md, "Sharded deployments").
package protocol InsertOnceRecordStore: SharedGenerationRecords {
    /// Writes `record` under ``VersionedGenerationRecord/id`` unless a record has that id already (that
    /// record is then left as it is, and no error is thrown).
    func insertIfAbsent(_ record: VersionedGenerationRecord) async throws

    /// The record under `id`; nil when there is none.
    func versionedRecord(id: String) async throws -> VersionedGenerationRecord?

    /// Every record (the records of one deployment's generations are few: a manifest per change, a part
    /// per shard).
    func allVersionedRecords() async throws -> [VersionedGenerationRecord]

    /// The records of `key` whose version is `version` or higher, in any order (a filter the store applies:
    /// Chroma's `where`, Qdrant's scroll `filter`).
    func versionedRecords(of key: String, from version: Int) async throws -> [VersionedGenerationRecord]

    /// The highest version of each key read so far, where ``sharedRecord(_:)`` starts its next read.
    var seenVersions: SeenRecordVersions { get }

    /// Deletes the records under `ids` (an id with no record is skipped).
    func deleteVersionedRecords(ids: [String]) async throws
}

/// One version of a record of ``InsertOnceRecordStore``.
package struct VersionedGenerationRecord: Sendable, Hashable {
    package var key: String
    package var version: Int
    /// The record's value (UTF-8 JSON).
    package var value: String
    /// The token of the process that wrote it.
    package var writer: String

    package init(key: String, version: Int, value: String, writer: String) {
        self.key = key
        self.version = version
        self.value = value
        self.writer = writer
    }

    /// `<key>@<version>`.
    package var id: String { Self.id(key, version) }

    package static func id(_ key: String, _ version: Int) -> String { "\(key)@\(version)" }
}

extension InsertOnceRecordStore {
    /// The highest version of `key`, read from the highest version seen before (one record while nothing
    /// changed): versions only grow, so the highest of those is the highest of all. When none is there any
    /// more (every record was deleted: `generation drop` of everything, and a new manifest written from
    /// version 1), every version of the key is read.
    package func sharedRecord(_ key: String) async throws -> SharedGenerationRecord? {
        let seen = seenVersions.highest(of: key)
        var found = try await versionedRecords(of: key, from: seen ?? 1)
        if found.isEmpty, seen != nil { found = try await versionedRecords(of: key, from: 1) }
        let latest = found.max { $0.version < $1.version }
        seenVersions.saw(key, version: latest?.version)
        return latest.map { SharedGenerationRecord(value: Data($0.value.utf8), version: $0.version) }
    }

    package func writeSharedRecord(_ key: String, _ value: Data, expecting version: Int?) async throws -> Bool {
        let text = String(decoding: value, as: UTF8.self)
        guard let version else {
            // Only one process writes such a key: a lost insert is a retry of our own, or a run of the same
            // shard at the same moment (the later write wins, as an overwrite would).
            for _ in 0..<5 {
                let older = try await versions(of: key)
                if try await insert(key, (older.last?.version ?? 0) + 1, text) {
                    if !older.isEmpty { try await deleteVersionedRecords(ids: older.map(\.id)) }
                    return true
                }
            }
            throw SluiceError(.sinkFailed, "\(key): five writes in a row lost to another writer of the same record")
        }
        return try await insert(key, version + 1, text)
    }

    package func sharedRecords(prefix: String) async throws -> [String: Data] {
        var latest: [String: VersionedGenerationRecord] = [:]
        for record in try await allVersionedRecords() where record.key.hasPrefix(prefix) {
            if (latest[record.key]?.version ?? 0) < record.version { latest[record.key] = record }
        }
        return latest.mapValues { Data($0.value.utf8) }
    }

    package func deleteSharedRecords(prefix: String) async throws {
        let ids = try await allVersionedRecords().filter { $0.key.hasPrefix(prefix) }.map(\.id)
        if !ids.isEmpty { try await deleteVersionedRecords(ids: ids) }
    }

    package func deploymentLock(shared: Bool) async throws -> (any DeploymentLockHold)? { nil }

    /// The versions of `key`, lowest first.
    func versions(of key: String) async throws -> [VersionedGenerationRecord] {
        try await versionedRecords(of: key, from: 1).sorted { $0.version < $1.version }
    }

    /// Inserts version `version` of `key` unless it exists, and reads it back.
    /// - Returns: whether the record there is this write's.
    private func insert(_ key: String, _ version: Int, _ value: String) async throws -> Bool {
        let record = VersionedGenerationRecord(key: key, version: version, value: value, writer: UUID().uuidString)
        try await insertIfAbsent(record)
        // None there: deleted meanwhile (a change deleting the parts): not this write's either.
        return try await versionedRecord(id: record.id)?.writer == record.writer
    }
}
