import Foundation
import SluiceCore
import SluiceSinks

extension Pipeline {
    /// The local store's index, read from the store itself (read-only, without the state lock: a run may be
    /// going on), for `sluice status`: `index` (`hnsw`, `ivf` or `exact`); with `hnsw`, `hnsw_nodes`
    /// (`memory` or `file`), `hnsw_graph` (`built`, `building`, `pending` or `below_exact_below`: searches
    /// scan unless `built`), `hnsw_exact_below` and, for a built graph, `hnsw_graph_generation`,
    /// `hnsw_graph_behind` and `hnsw_ef_search` (the breadth its searches use); with `ivf`, `ivf_epoch`, `ivf_lists`, `ivf_trained_on`, `ivf_entries` and, while
    /// an epoch is trained, `ivf_training` and `ivf_training_progress`.
    /// - Returns: nil for another kind of store, or before the first run has made the store.
    public static func localStoreIndex(configuration: PipelineConfiguration) async -> [String: String]? {
        await localStoreDetails(configuration: configuration).flatMap(storeIndex)
    }

    /// The local store's details (``SinkInfo/details``), read as ``localStoreIndex(configuration:)`` reads them:
    /// its index (``storeIndex(_:)``) and how this process's reads fault in its map (``storeMap(_:)``).
    /// - Returns: nil for another kind of store, or before the first run has made the store.
    public static func localStoreDetails(configuration: PipelineConfiguration) async -> [String: String]? {
        guard configuration.sink.kind == .local,
            let sink = try? SinkFactory.make(configuration, readOnly: true),
            let info = try? await sink.info()
        else { return nil }
        return info.details
    }

    /// The index's entries of a store's details (``localStoreIndex(configuration:)``'s keys), or nil when
    /// they name no index (another kind of store): `sluice serve`'s `/ready` reports them from its own store.
    public static func storeIndex(_ details: [String: String]) -> [String: String]? {
        guard details["index"] != nil else { return nil }
        return details.filter { $0.key == "index" || $0.key.hasPrefix("ivf_") || $0.key.hasPrefix("hnsw_") }
    }

    /// How this process's reads fault in the local store's LMDB map, from a store's details (`store_map` of
    /// `sluice status --json` and `/ready`): `fault_around` `off` (point reads fault one page at a time; scans keep
    /// fault-around) or `on` (the kernel's behaviour) and, with `on`, `reason`. Nil for another kind of store.
    public static func storeMap(_ details: [String: String]) -> [String: String]? {
        guard let state = details["lmdb_fault_around"] else { return nil }
        var map = ["fault_around": state]
        map["reason"] = details["lmdb_fault_around_reason"]
        return map
    }

    /// ``storeMap(_:)`` in one line (`sluice status`).
    public static func storeMapSummary(_ map: [String: String]) -> String? {
        switch map["fault_around"] {
        case "off": return "point reads fault one page at a time (fault-around off; scans keep it)"
        case "on": return "the kernel's fault-around" + (map["reason"].map { " (\($0))" } ?? "")
        default: return nil
        }
    }

    /// The local store's index in one line (`sluice check`, `sluice status`), from its details
    /// (``localStoreIndex(configuration:)``).
    public static func indexSummary(_ details: [String: String]) -> String? {
        guard let index = details["index"] else { return nil }
        if let graph = details["hnsw_graph"] { return "index \(index)" + graphSummary(graph, details) }
        let training = details["ivf_training"].map { epoch in
            "; training epoch \(epoch)" + (details["ivf_training_progress"].map { ", filled to label \($0)" } ?? "")
        }
        guard let lists = details["ivf_lists"], let epoch = details["ivf_epoch"],
            let trainedOn = details["ivf_trained_on"]
        else {
            return (details["ivf_epoch"].map { "index \(index): \($0)" } ?? "index \(index)") + (training ?? "")
        }
        let entries = details["ivf_entries"].map { ", \($0) entries" } ?? ""
        return "index \(index): epoch \(epoch), \(lists) lists, trained on \(trainedOn) vectors\(entries)"
            + (training ?? "")
    }

    /// The graph's part of ``indexSummary(_:)``: where its nodes live, and whether searches use it or scan.
    private static func graphSummary(_ graph: String, _ details: [String: String]) -> String {
        let nodes = details["hnsw_nodes"].map { " (nodes in \($0 == "file" ? "a file" : $0))" } ?? ""
        let exactBelow = details["hnsw_exact_below"] ?? "exact_below"
        switch graph {
        case "built":
            let generation = details["hnsw_graph_generation"].map { " at generation \($0)" } ?? ""
            let behind = details["hnsw_graph_behind"].flatMap(Int.init).map {
                $0 == 0 ? "" : ", \($0) writes behind (searches read them from the change log)"
            }
            let breadth = details["hnsw_ef_search"].map { " at ef \($0)" } ?? ""
            return "\(nodes): graph built\(generation)\(behind ?? ""); searches use it\(breadth)"
        case "building":
            return "\(nodes): graph being built; searches scan until it is ready"
        case "pending":
            return "\(nodes): no graph yet (\(exactBelow) vectors or more, sink.hnsw.exact_below); "
                + "searches scan until the next run builds it"
        case "below_exact_below":
            return "\(nodes): no graph below \(exactBelow) vectors (sink.hnsw.exact_below); searches scan"
        default:
            return "\(nodes): graph \(graph)"
        }
    }
}
