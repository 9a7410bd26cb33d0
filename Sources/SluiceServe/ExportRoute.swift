import Foundation
import Hummingbird
import SluiceCore
import SluicePipeline
import SluiceState

/// `GET /v1/export?cursor=&limit=`: the records of the served index (id, document key, ordinal, text,
/// vector, metadata: what `sluice export` writes), a page at a time in the checkpoint's key order (bytes)
/// then by ordinal, for the caller's identity (docs/ACCESS.md).
///
/// The store is asked a batch of documents' records at a time with the caller's access filter inside its
/// query (a search with a fixed probe, filtered on the batch's keys and ordinals, as a document read
/// does), never the whole store at once: a page holds at most ``maxLimit`` records, whatever the index's
/// size. A page holds `limit` records whenever more readable ones follow, and `next_cursor` names the last
/// record given (its document key and ordinal): neither says anything of the records the caller may not
/// read, which a restricted caller is never shown, counted or pointed at.
///
/// A record the store cannot read (a damaged local store) is left out, as `sluice export` leaves it out, and
/// named in the `unreadable` list of the one page whose range holds it (after the page's cursor, up to its
/// last record; to the end on the last page), with the reason `sluice export` gives: a client paging through
/// learns of each exactly once. A restricted caller is told nothing of them (``SkippedRecords``).
struct ExportRoute: Sendable {
    let checkpoint: CheckpointReader
    let served: ServedGeneration
    let access: PipelineConfiguration.Access

    static let maxLimit = 1000
    static let defaultLimit = 100
    /// Documents asked of the store at once (one query each batch, its filter bounded).
    static let batchDocuments = 200
    static let parameters: Set<String> = ["cursor", "limit"]

    struct Page: Encodable {
        var records: [VectorRecord]
        /// Pass as `cursor` for the next page; absent on the last.
        var nextCursor: String?
        /// Records of this page left out because their vectors are not finite (written by an older
        /// version; `sluice run --reembed` embeds them again), as `sluice export` leaves them out.
        var skipped: Int
        /// The records of this page's range the store could not read; nil (absent) for a restricted caller.
        var unreadable: [UnreadableRecord]?
        enum CodingKeys: String, CodingKey {
            case records, skipped, unreadable
            case nextCursor = "next_cursor"
        }
    }

    /// Where a page starts: after the record `ordinal` of `key`. Written `ORDINAL:KEY` (the key last, so
    /// it may hold any character); clients pass it back as it came.
    struct Cursor: Equatable {
        var key: String
        var ordinal: Int

        init(key: String, ordinal: Int) {
            self.key = key
            self.ordinal = ordinal
        }

        init?(_ text: String) {
            guard let colon = text.firstIndex(of: ":"), let ordinal = Int(text[..<colon]), ordinal >= 0 else {
                return nil
            }
            let key = String(text[text.index(after: colon)...])
            guard !key.isEmpty else { return nil }
            self.init(key: key, ordinal: ordinal)
        }

        var text: String { "\(ordinal):\(key)" }
    }

    /// - Parameter readable: The caller's access filter (nil: unrestricted, every record).
    func page(_ request: Request, readable: SearchFilter?) async throws -> Response {
        let query = request.uri.queryParameters
        for (name, _) in query where !Self.parameters.contains(String(name)) {
            throw APIError.badRequest("\(name): not a parameter of /v1/export (cursor, limit)")
        }
        var limit = Self.defaultLimit
        if let text = query["limit"] {
            guard let value = Int(String(text)), (1...Self.maxLimit).contains(value) else {
                throw APIError.badRequest("limit: an integer from 1 to \(Self.maxLimit)")
            }
            limit = value
        }
        var cursor: Cursor?
        if let text = query["cursor"] {
            guard let parsed = Cursor(String(text)) else {
                throw APIError.badRequest("cursor: the next_cursor of the page before")
            }
            cursor = parsed
        }
        let (records, more, unreadable) = try await records(after: cursor, limit: limit, readable: readable)
        var page = Page(
            records: [],
            nextCursor: nil,
            skipped: 0,
            unreadable: SkippedRecords.shown(unreadable, restricted: readable != nil)
        )
        for var record in records {
            guard VectorMath.problem(record.vector) == nil else {
                page.skipped += 1
                continue
            }
            // A record's readers name other principals and groups: the operator's to see (docs/ACCESS.md).
            if readable != nil { record.metadata[access.field] = nil }
            page.records.append(record)
        }
        if more, let last = records.last { page.nextCursor = Cursor(key: last.documentKey, ordinal: last.ordinal).text }
        AuditRecord.showed(records.map(\.documentKey))
        return try JSONResponse.make(page)
    }

    /// Up to `limit` records after `cursor` that `readable` matches, in key (bytes) then ordinal order,
    /// whether readable ones follow them, and the records of that range the store could not read.
    ///
    /// Each round plans the next documents of the checkpoint (their ordinals from the cursor on, as many as
    /// the page still needs plus one, at most ``batchDocuments`` documents) and asks the store for exactly
    /// those records under `readable`: one query, its `k` the plan's size. Unreadable records are never
    /// fetched; a round that finds none moves on to the next documents.
    ///
    /// The store's filtered scan meets a damaged record whatever the filter (its fields do not decode, so it
    /// cannot be matched): it is counted here only when the checkpoint plans its id in this page's range
    /// (``unreadable(_:planned:upTo:)``), so each is named on one page.
    func records(
        after cursor: Cursor?,
        limit: Int,
        readable: SearchFilter?
    ) async throws -> (records: [VectorRecord], more: Bool, unreadable: [UnreadableRecord]) {
        let served = self.served.snapshot
        let store = try checkpoint.open(generation: .some(served.generation))
        var found: [VectorRecord] = []
        var position = cursor
        var planned: [VectorID: Cursor] = [:]
        let log = UnreadableRecordLog()
        while found.count <= limit {
            let budget = limit + 1 - found.count
            let plan = try Self.plan(after: position, budget: budget, in: store)
            guard let last = plan.last else { break }
            position = Cursor(key: last.key, ordinal: last.ordinals.upperBound - 1)
            for part in plan {
                for (id, ordinal) in zip(part.ids, part.ordinals) {
                    planned[id] = Cursor(key: part.key, ordinal: ordinal)
                }
            }
            let filter = Self.filter(plan, readable: readable)
            let k = plan.reduce(0) { $0 + $1.ordinals.count }
            let sink = served.searcher.sink
            let batch = try await UnreadableRecordLog.$current.withValue(log) {
                try await DocumentRoutes.records(matching: filter, k: k, in: sink)
            }
            // Keys as bytes throughout: `String ==` takes NFC and NFD spellings for one key, and a page would
            // end on one twin and skip the other.
            found += batch.sorted {
                $0.documentKey.utf8.elementsEqual($1.documentKey.utf8)
                    ? $0.ordinal < $1.ordinal : $0.documentKey.utf8.lexicographicallyPrecedes($1.documentKey.utf8)
            }
            .prefix(budget)
        }
        let more = found.count > limit
        let page = Array(found.prefix(limit))
        let end = more ? page.last.map { Cursor(key: $0.documentKey, ordinal: $0.ordinal) } : nil
        return (page, more, Self.unreadable(log.records, planned: planned, upTo: end))
    }

    /// The records of `met` that are the page's: planned in its range (`planned`, each id's position), at or
    /// before `end` (nil: the last page, every planned one). What the scan met outside the range is another
    /// page's to name.
    static func unreadable(
        _ met: [UnreadableRecord],
        planned: [VectorID: Cursor],
        upTo end: Cursor?
    ) -> [UnreadableRecord] {
        met.filter { record in
            guard let position = planned[record.id] else { return false }
            guard let end else { return true }
            return position.key.utf8.elementsEqual(end.key.utf8)
                ? position.ordinal <= end.ordinal : position.key.utf8.lexicographicallyPrecedes(end.key.utf8)
        }
    }

    /// One document's ordinals asked of the store in a round.
    struct Planned: Equatable {
        var key: String
        var ordinals: Range<Int>
        /// Whether `ordinals` are all the document's (then its key alone says which records).
        var whole: Bool
        /// The checkpoint's ids of those records, in ordinal order.
        var ids: ArraySlice<VectorID> = []
    }

    /// The next documents after `cursor`, in the checkpoint's (LMDB's) byte order, with the ordinals it
    /// holds for them (0 to its chunk count), `budget` records in all at most.
    static func plan(after cursor: Cursor?, budget: Int, in store: CheckpointStore) throws -> [Planned] {
        var plan: [Planned] = []
        var planned = 0
        try store.forEachDocument { record in
            guard planned < budget, plan.count < batchDocuments else { return }
            var start = 0
            if let cursor {
                // As bytes: `String ==` takes two spellings of one text (NFC, NFD) for the same key.
                if record.key.utf8.elementsEqual(cursor.key.utf8) {
                    start = cursor.ordinal + 1
                } else if !cursor.key.utf8.lexicographicallyPrecedes(record.key.utf8) {
                    return
                }
            }
            let count = record.chunkIDs.count
            guard start < count else { return }
            let end = start + min(count - start, budget - planned)
            plan.append(
                Planned(
                    key: record.key,
                    ordinals: start..<end,
                    whole: start == 0 && end == count,
                    ids: record.chunkIDs[start..<end]
                )
            )
            planned += end - start
        }
        return plan
    }

    /// The plan's records as one filter (whole documents by key, the others by key and ordinal range),
    /// ANDed with the caller's access filter.
    static func filter(_ plan: [Planned], readable: SearchFilter?) -> SearchFilter {
        var parts: [SearchFilter] = []
        let whole = plan.filter(\.whole).map { MetadataValue.string($0.key) }
        if !whole.isEmpty { parts.append(.oneOf(SearchFilter.documentKeyField, whole)) }
        for part in plan where !part.whole {
            parts.append(
                .and([
                    .compare(SearchFilter.documentKeyField, .equal, .string(part.key)),
                    .compare(SearchFilter.ordinalField, .greaterOrEqual, .int(part.ordinals.lowerBound)),
                    .compare(SearchFilter.ordinalField, .less, .int(part.ordinals.upperBound)),
                ])
            )
        }
        let records = parts.count == 1 ? parts[0] : SearchFilter.or(parts)
        return readable.map { .and([records, $0]) } ?? records
    }
}
