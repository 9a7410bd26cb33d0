import Foundation
import SluiceCore
import SluiceSinks

extension Pipeline {
    /// The local store's index, read from the store itself (read-only, without the state lock: a run may be
    /// going on), for `sluice status`: `index` (`hnsw`, `ivf` or `exact`) and, with `ivf`, `ivf_epoch`,
    /// `ivf_lists`, `ivf_trained_on`, `ivf_entries` and, while an epoch is trained, `ivf_training` and
    /// `ivf_training_progress`.
    /// - Returns: nil for another kind of store, or before the first run has made the store.
    public static func localStoreIndex(configuration: PipelineConfiguration) async -> [String: String]? {
        guard configuration.sink.kind == .local,
            let sink = try? SinkFactory.make(configuration, readOnly: true),
            let info = try? await sink.info()
        else { return nil }
        return info.details.filter { $0.key == "index" || $0.key.hasPrefix("ivf_") }
    }

    /// The local store's index in one line (`sluice check`, `sluice status`), from its details
    /// (``localStoreIndex(configuration:)``).
    public static func indexSummary(_ details: [String: String]) -> String? {
        guard let index = details["index"] else { return nil }
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
}
