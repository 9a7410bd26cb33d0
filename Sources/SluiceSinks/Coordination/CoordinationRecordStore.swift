import Foundation
import SluiceCore

/// A coordination store (`generations.coordination`): the generation records of one sharded deployment on
/// Pinecone, kept by the insert-once protocol (``InsertOnceRecordStore``) in a store that has an insert-once
/// write: a PostgreSQL table (``PostgresCoordinationStore``) or an S3 bucket (`S3CoordinationStore`, which
/// writes with `If-None-Match: *`).
package protocol CoordinationRecordStore: InsertOnceRecordStore, AnyObject {
    /// Where the records are, without any secret (for `sluice check` and messages).
    var location: String { get }

    /// What `sluice check` says of the store: reached, and the version of the deployment's manifest.
    /// - Returns: the highest version of `manifest` (nil: none yet).
    /// - Throws: an unavailability when the store cannot be reached, ``SluiceError/Code/configuration`` for
    ///   an answer no retry changes (access denied).
    func checkReachable() async throws -> Int?
}

extension PostgresCoordinationStore: CoordinationRecordStore {}
