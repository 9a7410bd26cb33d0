import Foundation
import SluiceCore
import SluiceTesting
import Testing

/// The campaign's hostile files (issue 37): documents that turn a little stored text into a great deal of
/// produced text by reference or repetition (``HostileDocuments``: a shared string named by every cell, a
/// header repeated before every value, a slide or chapter listed again and again, a run repeated in every
/// paragraph, a key in the path of every value), one per Office, e-book and text format. Each must fail
/// alone at the default `extract.max_text_mb` with `text-too-large` in `sluice status`, the run exiting 2
/// and the other documents indexed as without it; a sheet of a million small rows must be indexed.
///
/// Without `SLUICE_FAULT_CAMPAIGN`, only the campaign's first case runs (the 85 KB workbook whose one
/// shared string, named by 1,000 cells, made 535,185 vectors and 2.0 GB of peak memory before the bound).
extension FaultCampaignTests {
    static let representativeHostileFile = "XLSX: one shared string named by every cell"

    static func hostileDocument(labelled label: String) -> HostileDocuments.Document? {
        (HostileDocuments.all() + [HostileDocuments.xlsxManyRows()]).first { $0.label == label }
    }

    @Test("a hostile file that multiplies its text fails alone with text-too-large")
    func hostileFile() async throws {
        try await Self.runHostileFile(try #require(Self.hostileDocument(labelled: Self.representativeHostileFile)))
    }

    @Test(
        "the sweep: every hostile file that multiplies its text, and a million-row sheet",
        .enabled(if: FaultCampaign.sweep),
        arguments: (HostileDocuments.all() + [HostileDocuments.xlsxManyRows()]).map { $0.label }
            .filter { $0 != representativeHostileFile }
    )
    func hostileFileSweep(_ label: String) async throws {
        try await Self.runHostileFile(try #require(Self.hostileDocument(labelled: label)))
    }

    static func runHostileFile(_ document: HostileDocuments.Document) async throws {
        let ws = try Workspace("faults-hostile")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 6, into: ws.corpus, seed: 0x5EED_3701, maxBytes: 3_000)
        let settings = ["--set", #"source.include=["**/*"]"#]
        let reference = ws.target("reference")
        try await ws.run(reference, settings, expecting: 0)
        let expected = try Export.records(try await ws.export(reference))
        // A bounded reader produces at most the default 32 MB of text from any of them: the run takes
        // seconds (unbounded, the first took 345 s); the deadline only guards against a hang.
        let multiplies = document.producedBytes > 32 << 20
        let key = "hostile/" + document.name

        try await FaultCampaign.scenario(.input, "hostile file: \(document.label)") { scenario in
            let folder = ws.corpus.appendingPathComponent("hostile", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(document.bytes).write(to: folder.appendingPathComponent(document.name))
            let target = ws.target("main")
            let started = ContinuousClock.now
            let result = try await ws.run(target, settings, timeout: .seconds(600))
            scenario.notes.append(
                "\(document.bytes.count) bytes, exit \(result.exitCode.map(String.init) ?? "-"), \(started.duration(to: .now).formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))"
            )
            scenario.expect(!result.stderr.contains("Fatal error"), "the run crashed: \(result)")
            scenario.expect(result.exitCode == (multiplies ? 2 : 0), "exit code: \(result)")
            let records = try Export.records(try await ws.export(target))
            scenario.expect(
                records.filter { keys.contains($0.documentKey) } == expected,
                "the good documents are not stored as without the hostile one"
            )
            let status = try await ws.status(target)
            if multiplies {
                let reason = status.failures[key] ?? ""
                scenario.expect(
                    reason.hasPrefix("text-too-large: ") && reason.contains("extract.max_text_mb"),
                    "\(key) did not fail with text-too-large:\n\(status.text)"
                )
                scenario.expect(!records.contains { $0.documentKey == key }, "\(key) has vectors")
            } else {
                scenario.expect(status.failures.isEmpty, "a document failed:\n\(status.text)")
                scenario.expect(records.contains { $0.documentKey == key }, "\(key) was not indexed")
            }
            // A second run leaves the known failure alone (exit 2 again, nothing extracted again).
            let again = try await ws.run(target, settings, timeout: .seconds(600))
            scenario.expect(again.exitCode == 0 || again.exitCode == 2, "second run: \(again)")
        }
    }
}
