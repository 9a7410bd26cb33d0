import Foundation
import Testing

/// The bookkeeping of the fault campaign (issue 14, `FaultCampaignTests`): whether the full sweep runs, and
/// one line per scenario in a results file that `scripts/fault-campaign.sh` tallies.
///
/// - `SLUICE_FAULT_CAMPAIGN` set: every scenario runs (many minutes); unset, only the small always-on subset.
/// - `SLUICE_FAULT_RESULTS=<file>`: each scenario appends `<category>\t<name>\t<outcome>\t<detail>`, where the
///   category is `fault` (outcome `survived` or `lost`) or `input` (outcome `clean` or `unclean`).
enum FaultCampaign {
    static let sweep = ProcessInfo.processInfo.environment["SLUICE_FAULT_CAMPAIGN"] != nil
    static let results: URL? = ProcessInfo.processInfo.environment["SLUICE_FAULT_RESULTS"].flatMap {
        $0.isEmpty ? nil : URL(fileURLWithPath: $0)
    }
    private static let lock = NSLock()

    enum Category: String, Sendable {
        /// A fault injected into a run (kill -9, a failing store, a misbehaving provider's transport): it must
        /// be survived with nothing lost.
        case fault
        /// A bad input (document, provider answer, setting, state): it must be handled cleanly.
        case input
    }

    /// Runs one scenario and appends its line to the results file: passed if `body` returned without
    /// recording a problem through the ``Scenario``.
    static func scenario(
        _ category: Category,
        _ name: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: (Scenario) async throws -> Void
    ) async throws {
        let scenario = Scenario(category: category, name: name)
        do {
            try await body(scenario)
        } catch {
            scenario.problems.append("stopped: \(error)")
            record(scenario)
            throw error
        }
        record(scenario)
    }

    private static func record(_ scenario: Scenario) {
        guard let results else { return }
        let passed = scenario.problems.isEmpty
        let outcome = scenario.category == .fault ? (passed ? "survived" : "lost") : (passed ? "clean" : "unclean")
        let detail = (scenario.problems.first ?? scenario.notes.joined(separator: "; "))
            .replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ").prefix(300)
        let line = "\(scenario.category.rawValue)\t\(scenario.name)\t\(outcome)\t\(detail)\n"
        lock.lock()
        defer { lock.unlock() }
        if !FileManager.default.fileExists(atPath: results.path) {
            _ = FileManager.default.createFile(atPath: results.path, contents: nil)
        }
        guard let handle = try? FileHandle(forWritingTo: results) else { return }
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: Data(line.utf8))
    }
}

/// One scenario's checks: each failed check is an issue of the test and a problem of the scenario.
final class Scenario: @unchecked Sendable {
    let category: FaultCampaign.Category
    let name: String
    fileprivate(set) var problems: [String] = []
    /// What happened, for the results file (e.g. "killed", "ended before the kill").
    var notes: [String] = []

    init(category: FaultCampaign.Category, name: String) {
        self.category = category
        self.name = name
    }

    func expect(
        _ condition: Bool,
        _ message: @autoclosure () -> String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard !condition else { return }
        let text = "\(name): \(message())"
        problems.append(text)
        Issue.record(Comment(rawValue: text), sourceLocation: sourceLocation)
    }

    /// The exports must be the same bytes.
    func expectSameExport(
        _ actual: Data,
        _ expected: Data,
        _ what: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard actual != expected else { return }
        problems.append("\(name): \(what): exports differ")
        reportExportDifference(actual, expected, "\(name): \(what)", sourceLocation: sourceLocation)
    }
}

/// The shared comparison (Support/Expectations.swift), under a name that cannot be shadowed by a method.
private func reportExportDifference(_ actual: Data, _ expected: Data, _ what: String, sourceLocation: SourceLocation) {
    expectSameExport(actual, expected, what, sourceLocation: sourceLocation)
}
