import Foundation
import SluiceCore

/// What `POST /v1/search` and `POST /v1/ask` say of the records their searches skipped because the store
/// could not read them (docs/RELIABILITY.md, "A damaged record in the local store"): the `skipped` field, each
/// record's id, document key (when it could still be read) and reason.
///
/// Only an unrestricted caller is told. A record that cannot be read cannot be checked against the caller's
/// access (its readers are among the bytes that do not decode), so a restricted caller learns nothing of it,
/// not even that there was one: the field is absent from its answers (docs/ACCESS.md). The service's log says
/// what was skipped either way (``ReadNoticeLog``).
enum SkippedRecords {
    /// The answer's `skipped` field: `records` for an unrestricted caller, nil (absent) for a restricted one.
    static func shown(_ records: [UnreadableRecord], restricted: Bool) -> [UnreadableRecord]? {
        restricted ? nil : records
    }

    /// One record as the ask answer's JSON object holds it.
    static func jsonObject(_ record: UnreadableRecord) -> [String: Any] {
        [
            "id": record.id.rawValue,
            "document_key": record.documentKey.map { $0 as Any } ?? NSNull(),
            "reason": record.reason,
        ]
    }
}
