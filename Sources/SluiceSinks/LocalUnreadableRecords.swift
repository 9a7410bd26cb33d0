import SluiceCore
import Synchronization

/// The records a local store's searches skipped because their bytes do not decode (a damaged page, a
/// hostile file: `LocalRecordLayout.swift`): a search answers from the records it can read, as if the
/// damaged one were absent, and the sink says what it skipped (``LocalSink/readNotice``), so `sluice search`
/// and the service report it instead of failing every query that meets the record. Writes, exports and the
/// keyword index's rebuild still stop at such a record (docs/RELIABILITY.md, "A damaged record in the local
/// store").
final class LocalUnreadableRecords: Sendable {
    private struct State {
        var ids: [String] = []
        var seen = Set<String>()
        var firstError: String?
    }

    private let state = Mutex(State())

    /// How many ids the notice names.
    static let named = 5

    /// The record `id`, or nil after noting it when its bytes do not decode.
    /// - Throws: what is not the record's damage (a cancelled read, LMDB's errors).
    func record<Bytes: Collection>(id: [UInt8], _ bytes: Bytes) throws -> VectorRecord? where Bytes.Element == UInt8 {
        do {
            return try LocalSink.decode(id: id, bytes)
        } catch let error as SluiceError where error.code == .sinkFailed {
            let name = String(decoding: id, as: UTF8.self)
            state.withLock {
                guard $0.seen.insert(name).inserted else { return }
                $0.ids.append(name)
                if $0.firstError == nil { $0.firstError = error.message }
            }
            return nil
        }
    }

    /// What the searches skipped since the sink was opened, nil when nothing.
    var notice: String? {
        state.withLock { state in
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
