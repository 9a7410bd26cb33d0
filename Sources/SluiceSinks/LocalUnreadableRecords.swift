import SluiceCore
import Synchronization

/// The records a local store's reads skipped because their bytes do not decode (a damaged page, a hostile
/// file: `LocalRecordLayout.swift`): a search answers from the records it can read, as if the damaged one
/// were absent, and the sink says what it skipped (``LocalSink/readNotice``), so `sluice search` and the
/// service report it instead of failing every query that meets the record. An export, the adoption's scan of
/// document keys and the keyword index's rebuild skip such a record the same way and say so; `sluice verify`
/// finds every one (``LocalSink/unreadableRecords()``) and `verify --repair` deletes them (docs/RELIABILITY.md,
/// "A damaged record in the local store").
///
/// One search's view (``forSearch(_:)``) notes what it skips in the sink's list and in the search's own
/// ``UnreadableRecordLog`` too, so that the service's answer names what that search left out.
final class LocalUnreadableRecords: Sendable {
    private struct State {
        var ids: [String] = []
        var seen = Set<String>()
        var firstError: String?
    }

    private let state = Mutex(State())
    /// The sink's list, when this is one search's view of it.
    private let shared: LocalUnreadableRecords?
    /// The search's own log, when this is one search's view.
    private let log: UnreadableRecordLog?

    init() {
        shared = nil
        log = nil
    }

    private init(shared: LocalUnreadableRecords, log: UnreadableRecordLog) {
        self.shared = shared
        self.log = log
    }

    /// How many ids the notice names.
    static let named = 5

    /// This list, noting what a search skips in `log` as well (itself when `log` is nil).
    func forSearch(_ log: UnreadableRecordLog?) -> LocalUnreadableRecords {
        guard let log else { return self }
        return LocalUnreadableRecords(shared: shared ?? self, log: log)
    }

    /// The record `id`, or nil after noting it when its bytes do not decode.
    /// - Throws: what is not the record's damage (a cancelled read, LMDB's errors).
    func record<Bytes: Collection>(id: [UInt8], _ bytes: Bytes) throws -> VectorRecord? where Bytes.Element == UInt8 {
        do {
            return try LocalSink.decode(id: id, bytes)
        } catch let error as SluiceError where error.code == .sinkFailed {
            note(LocalUnreadableRecords.unreadable(id: id, bytes, error))
            return nil
        }
    }

    /// The record `id`'s document key, or nil after noting it when the key cannot be read from its bytes.
    /// - Throws: what is not the record's damage.
    func documentKey<Bytes: Collection>(id: [UInt8], _ bytes: Bytes) throws -> String?
    where Bytes.Element == UInt8 {
        do {
            return try LocalSink.documentKey(bytes, record: String(decoding: id, as: UTF8.self))
        } catch let error as SluiceError where error.code == .sinkFailed {
            note(
                UnreadableRecord(
                    id: VectorID(rawValue: String(decoding: id, as: UTF8.self)),
                    documentKey: nil,
                    reason: error.message
                )
            )
            return nil
        }
    }

    /// What is known of the record `id` that failed to decode with `error`: its document key when that part of
    /// its bytes still reads.
    static func unreadable<Bytes: Collection>(id: [UInt8], _ bytes: Bytes, _ error: SluiceError) -> UnreadableRecord
    where Bytes.Element == UInt8 {
        let name = String(decoding: id, as: UTF8.self)
        return UnreadableRecord(
            id: VectorID(rawValue: name),
            documentKey: try? LocalSink.documentKey(bytes, record: name),
            reason: error.message
        )
    }

    /// Notes `record` in the sink's list (and the search's log).
    func note(_ record: UnreadableRecord) {
        log?.note(record)
        if let shared { return shared.note(record) }
        state.withLock {
            guard $0.seen.insert(record.id.rawValue).inserted else { return }
            $0.ids.append(record.id.rawValue)
            if $0.firstError == nil { $0.firstError = record.reason }
        }
    }

    /// What the reads skipped since the sink was opened, nil when nothing.
    var notice: String? {
        if let shared { return shared.notice }
        return state.withLock { state in
            guard let first = state.firstError else { return nil }
            let names = state.ids.prefix(Self.named).map { DisplayEscaping.escaped($0) }.joined(separator: ", ")
            let more = state.ids.count > Self.named ? " and \(state.ids.count - Self.named) more" : ""
            return "skipped \(state.ids.count) record(s) of the local store that could not be read (\(names)\(more)); "
                + "the first: \(first)"
        }
    }
}

extension LocalSink {
    /// The record `id`, read by `unreadable` when there is one (skipped there when it does not decode), else
    /// decoded (throwing when it does not).
    static func record<Bytes: Collection>(
        id: [UInt8],
        _ bytes: Bytes,
        skipping unreadable: LocalUnreadableRecords?
    ) throws -> VectorRecord? where Bytes.Element == UInt8 {
        guard let unreadable else { return try decode(id: id, bytes) }
        return try unreadable.record(id: id, bytes)
    }
}
