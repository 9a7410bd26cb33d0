import Foundation
import SluiceCore
import Testing

/// A record of the local store whose bytes no longer decode (docs/RELIABILITY.md, "A damaged record in the
/// local store"), damaged in the store's file as a bad page would: `verify` reports it (exit 2) and
/// `verify --repair` deletes it and embeds its document again, ending equal to an undamaged run; `export`
/// writes the other records, names it and exits 2; a lost state does not adopt it and says so.
@Suite("A damaged record in the local store")
struct LocalDamagedRecordCLITests {
    /// Text only the damaged document's record holds (hyphens split it into other terms for the keyword
    /// index, so its bytes appear in the record's text alone).
    static let marker = "zqx-damaged-record-zqx"

    /// Indexes a small corpus plus `damaged.txt`, then damages that document's record in the store's file.
    /// - Returns: the target and its undamaged export.
    static func damagedStore(_ ws: Workspace) async throws -> (Workspace.Target, Data) {
        try Corpus.write(count: 12, into: ws.corpus, seed: 0x5EED_2800)
        try Corpus.write(
            "Harbour cranes lift the \(marker) containers onto the quay at dawn.\n",
            to: ws.corpus.appendingPathComponent("damaged.txt")
        )
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let undamaged = try await ws.export(main)
        let data = main.index.appendingPathComponent("data.mdb")
        // Invalid UTF-8 in the record's text: its key and vector still read, its fields do not.
        let copies = try StateDamageCLITests.overwrite(marker, in: data, with: 0xFF)
        try #require(copies > 0, "the record's text was not found in \(data.path)")
        return (main, undamaged)
    }

    @Test("verify reports the damaged record, verify --repair deletes it and embeds its document again")
    func verifyAndRepair() async throws {
        let ws = try Workspace("damaged-record-verify")
        defer { ws.cleanUp() }
        let (main, undamaged) = try await Self.damagedStore(ws)

        let found = try await ws.sluice(["verify", ws.pipeline.path] + main.arguments)
        #expect(found.exitCode == 2, "\(found)")
        #expect(found.stdout.contains("unreadable in the store: 1 records"), "\(found)")
        let line = try #require(found.stdout.split(separator: "\n").first { $0.contains("  unreadable  ") })
        #expect(line.contains("damaged.txt") && line.contains("not UTF-8"), "\(line)")

        let json = try await ws.sluice(["verify", ws.pipeline.path, "--json"] + main.arguments)
        #expect(json.exitCode == 2, "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let unreadable = try #require(object["unreadable"] as? [[String: Any]])
        #expect(
            unreadable.count == 1 && (unreadable.first?["document_key"] as? String)?.hasSuffix("damaged.txt") == true
        )
        #expect((unreadable.first?["id"] as? String)?.count == 32, "\(unreadable)")
        #expect(object["consistent"] as? Bool == false)

        let repaired = try await ws.sluice(["verify", ws.pipeline.path, "--repair"] + main.arguments)
        #expect(repaired.exitCode == 0, "\(repaired)")
        #expect(repaired.stdout.contains("deleted: their documents are embedded again"), "\(repaired)")
        let again = try await ws.sluice(["verify", ws.pipeline.path] + main.arguments)
        #expect(again.exitCode == 0 && again.stdout.contains("consistent"), "\(again)")
        #expect(try await ws.export(main) == undamaged, "the repaired store equals the undamaged one")
    }

    @Test("export writes every other record, names the damaged one and exits 2")
    func exportGoesOn() async throws {
        let ws = try Workspace("damaged-record-export")
        defer { ws.cleanUp() }
        let (main, undamaged) = try await Self.damagedStore(ws)
        let process = try ws.start(["export", ws.pipeline.path] + main.arguments)
        let result = try await process.wait(timeout: .seconds(600))
        #expect(result.exitCode == 2, "\(result)")
        #expect(result.stderr.contains("could not be read") && result.stderr.contains("not UTF-8"), "\(result)")
        let written = try Export.records(try Data(contentsOf: process.stdoutURL))
        let expected = try Export.records(undamaged).filter { !$0.text.contains(Self.marker) }
        #expect(written == expected, "every readable record, in order")
    }

    @Test("a lost state does not adopt the damaged record: it says so, embeds it again, and the store is whole")
    func adoptionSkips() async throws {
        let ws = try Workspace("damaged-record-adopt")
        defer { ws.cleanUp() }
        let (main, undamaged) = try await Self.damagedStore(ws)
        let lost = Workspace.Target(state: ws.target("lost").state, index: main.index)
        let stats = ws.file("adopt-stats.json")
        let result = try await ws.run(lost, ["--stats-json", stats.path], expecting: 0)
        #expect(result.stderr.contains("such a record is not adopted"), "\(result)")
        let figures = try ws.stats(stats)
        #expect(figures["chunks_embedded"] == 1, "only the damaged record's chunk: \(figures.values)")
        #expect(try await ws.export(lost) == undamaged, "the store is whole again")
    }
}
