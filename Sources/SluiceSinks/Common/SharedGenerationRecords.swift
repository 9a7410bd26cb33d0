import Foundation
import SluiceCore

/// What a store behind a server keeps for the index generations of a sharded deployment (docs/GENERATIONS.md,
/// "Sharded deployments"): the shards' states are on several machines, so the one manifest and each shard's
/// part of the candidate are kept where every shard reaches them, in the store itself, as small records
/// under string keys, each with a version that a write can be made conditional on.
package protocol SharedGenerationRecords: Sendable {
    /// The record under `key` and its version; nil when there is none.
    func sharedRecord(_ key: String) async throws -> SharedGenerationRecord?

    /// Writes the record under `key`.
    /// - Parameter version: the version the record must have for the write to be made (0: it must not
    ///   exist); nil: written whatever is there.
    /// - Returns: false when `version` did not match (nothing written): another process changed it.
    func writeSharedRecord(_ key: String, _ value: Data, expecting version: Int?) async throws -> Bool

    /// Every record whose key starts with `prefix`, by key.
    func sharedRecords(prefix: String) async throws -> [String: Data]

    /// Deletes every record whose key starts with `prefix`.
    func deleteSharedRecords(prefix: String) async throws

    /// Takes the deployment's lock, held until the returned value is released or the process ends (a
    /// process killed with it held releases it): `shared` for a shard's run, exclusive for a change of
    /// the generations.
    /// - Returns: nil for a store that has no such lock (Chroma, Qdrant: ``InsertOnceRecordStore``): there
    ///   the conditional write of the manifest and the parts' versions keep changes safe.
    /// - Throws: ``SluiceError/Code/lockHeld`` when it is held the other way (or exclusively).
    func deploymentLock(shared: Bool) async throws -> (any DeploymentLockHold)?
}

/// One record of ``SharedGenerationRecords``.
package struct SharedGenerationRecord: Sendable, Hashable {
    package var value: Data
    /// Starts at 1 and grows with every write.
    package var version: Int

    package init(value: Data, version: Int) {
        self.value = value
        self.version = version
    }
}

/// A held deployment lock (``SharedGenerationRecords/deploymentLock(shared:)``): released by
/// ``release()``, or when the value is deinitialized.
package protocol DeploymentLockHold: AnyObject, Sendable {
    func release() async
}
