import Foundation
import Sluice
import SluiceCommandLine

/// `status --json` and `verify --json`: one JSON document each, keys in snake_case and sorted, every
/// key always present (`null` when there is nothing to say), named as in `--stats-json` (a run's `stats`
/// object is exactly that file's document). Text from outside (document keys, reasons) is the real text,
/// escaped only as JSON requires.
enum MachineReadable {
    static func status(_ report: StateReport, extractionCacheCapMB: Double) -> [String: Any] {
        [
            "state_directory": report.stateDirectory.path,
            // false: a reader's state (no run has loaded with it); the counts below are then all zero.
            "checkpoint": report.hasCheckpoint,
            "embedder": report.embedder ?? NSNull(),
            "pending_sink_reset": report.pendingSinkReset ?? NSNull(),
            "documents_by_status": report.documentsByStatus,
            "documents": report.documentsByStatus.values.reduce(0, +),
            "vectors_tracked": report.vectorsTracked,
            "embedding_cache_entries": report.embeddingCacheEntries,
            "extraction_cache": [
                "entries": report.extractionCacheEntries, "bytes": report.extractionCacheBytes,
                // 0: the cache is off (extract.cache_mb).
                "cap_mb": extractionCacheCapMB,
            ] as [String: Any],
            "recent_runs": report.recentRuns.map(run),
            "failures": report.failures.map { record in
                [
                    "document_key": record.key,
                    "code": record.error?.code ?? NSNull(),
                    "reason": record.error?.message ?? NSNull(),
                    "removed_vectors": record.removedVectors ?? NSNull(),
                    "attempts": record.attempts,
                    // A permanent failure not retried until the file or the settings change (docs/DESIGN.md §11).
                    "known": record.knownFailure != nil,
                ] as [String: Any]
            },
        ]
    }

    /// One run record: how it ended and, when it finished, its `--stats-json` document.
    static func run(_ record: RunRecord) -> [String: Any] {
        [
            "run_id": record.runID,
            "started_at": record.startedAt,
            "ended_at": record.endedAt ?? NSNull(),
            "exit_code": record.exitCode ?? NSNull(),
            "outcome": outcome(record),
            "failure": record.failure ?? NSNull(),
            "stats": record.stats.flatMap(object) ?? NSNull(),
        ]
    }

    /// The exit code's name (docs/OPERATIONS.md), or `unfinished` for a run that crashed or still runs.
    static func outcome(_ record: RunRecord) -> String {
        guard let code = record.exitCode else {
            return record.stats == nil && record.failure == nil ? "unfinished" : "stopped"
        }
        switch code {
        case 0: return "success"
        case 1: return "usage"
        case 2: return "documents_failed"
        case 3: return "lock_held"
        case 4: return "interrupted"
        case 5: return "provider_refused"
        case 6: return "dependency_unavailable"
        case 7: return "mass_delete_refused"
        case 70: return "internal_error"
        default: return "exit_\(code)"
        }
    }

    static func verify(_ report: VerifyReport, sink: String, repair: Bool) -> [String: Any] {
        var out: [String: Any] = [
            "sink": sink,
            "documents": report.documents,
            "vectors_tracked": report.tracked,
            "vectors_stored": report.stored,
            // A shard's state: its K/N, and the store's vectors of the documents it owns (the others' are not compared).
            "shard": report.shard ?? NSNull(),
            "vectors_stored_in_shard": report.storedInShard ?? NSNull(),
            "missing_vectors": report.missingCount,
            "missing": report.missing.sorted { $0.key < $1.key }.map {
                ["document_key": $0.key, "vectors": $0.value] as [String: Any]
            },
            // null: this store cannot list its ids, so unknown vectors were not looked for.
            "unknown_vectors": report.listable ? report.unknown.count : NSNull(),
            "unknown": report.listable ? report.unknown.map(\.description) : NSNull(),
            "forgotten_records": report.forgottenRecords,
            "forgotten_runs": report.forgottenRuns,
            // The store's records that cannot be read; with repair, deleted (their documents embedded again).
            "unreadable": report.unreadable.map {
                [
                    "id": $0.id.rawValue, "document_key": $0.documentKey.map { $0 as Any } ?? NSNull(),
                    "reason": $0.reason,
                ] as [String: Any]
            },
            "consistent": report.isConsistent,
            "repair": NSNull(),
        ]
        if repair {
            out["repair"] =
                [
                    "deleted_unknown": report.deletedUnknown,
                    // The run that re-upserted the documents with missing vectors (its --stats-json document).
                    "run": report.repairRun.flatMap(object) ?? NSNull(),
                    "exit_code": report.repairRun?.exitCode.rawValue ?? 0,
                ] as [String: Any]
        }
        return out
    }

    /// `value` encoded as `--stats-json` encodes it, as a JSON object.
    static func object(_ value: some Encodable) -> Any? {
        guard let data = try? JSONEncoder().encode(value) else { return nil }
        return try? JSONSerialization.jsonObject(with: data)
    }

    /// `value` as one line of JSON with sorted keys (`search --json`), C1 controls escaped as in ``print(_:)``.
    static func jsonLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return escapingC1(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// DEL and the C1 controls as `\u00XX` (JSON may carry them raw, but some terminals obey them).
    static func escapingC1(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return text }
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if (0x7F...0x9F).contains(scalar.value) {
                escaped.append(contentsOf: "\\u00\(String(scalar.value, radix: 16))".unicodeScalars)
            } else {
                escaped.append(scalar)
            }
        }
        return String(escaped)
    }

    /// One pretty-printed document with sorted keys (as `--stats-json`), and a final line break. DEL and
    /// the C1 controls, which JSON may carry raw but some terminals obey, are written as `\u00XX` (they
    /// can only occur inside strings, where that is the same text).
    static func print(_ object: [String: Any]) throws {
        let data = try JSONSerialization.data(
            withJSONObject: object,
            options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        )
        var text = escapingC1(String(decoding: data, as: UTF8.self))
        // Foundation writes an empty array as `[`, a blank line, `]`; a raw line break is never inside a string.
        text = text.replacingOccurrences(of: #"\[\s*\n\s*\]"#, with: "[]", options: .regularExpression)
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
