import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A truncated, emptied or damaged state file is refused by every command with a message that says what
/// happened and how to recover (exit 1): never a crash, never taken for a fresh state.
@Suite("Damaged state files")
struct StateDamageCLITests {
    enum Damage: String, CaseIterable, Sendable {
        case halfLength = "half-length"
        case zeroLength = "zero-length"
        case recordBytes = "record-bytes"
    }

    /// Indexes a small corpus, then damages the target's `data.mdb`.
    static func damagedState(_ ws: Workspace, _ damage: Damage) async throws -> Workspace.Target {
        try Corpus.write(count: 30, into: ws.corpus, seed: 0x5EED_1400)
        let main = ws.target("main")
        try await ws.run(main, expecting: 0)
        let data = main.state.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: data)
        switch damage {
        case .halfLength:
            bytes = bytes.prefix(bytes.count / 2)
        case .zeroLength:
            bytes = Data()
        case .recordBytes:
            try #require(try overwrite(#""status":"indexed""#, in: data) > 0, "no document record found in data.mdb")
            return main
        }
        try bytes.write(to: data)
        return main
    }

    /// Overwrites every copy of `marker` in `file` (LMDB keeps old pages around) with bytes that are not
    /// JSON, so that the records holding it no longer parse (`byte`, 0x7F unless told).
    /// - Returns: how many copies were overwritten.
    static func overwrite(_ marker: String, in file: URL, with byte: UInt8 = 0x7F) throws -> Int {
        var bytes = try Data(contentsOf: file)
        let marker = Data(marker.utf8)
        var start = bytes.startIndex
        var damaged = 0
        while let range = bytes.range(of: marker, in: start..<bytes.endIndex) {
            bytes.replaceSubrange(range, with: Data(repeating: byte, count: marker.count))
            start = range.upperBound
            damaged += 1
        }
        try bytes.write(to: file)
        return damaged
    }

    @Test(
        "status, run, run --dry-run and verify refuse a damaged state with exit 1 and say how to recover",
        arguments: Damage.allCases
    )
    func damagedStateIsRefused(_ damage: Damage) async throws {
        let ws = try Workspace("state-\(damage.rawValue)")
        defer { ws.cleanUp() }
        let main = try await Self.damagedState(ws, damage)
        // A dry run reads the records as the run does (issue 30: it took a damaged state for none, and a
        // damaged record for a new document).
        for command in ["status", "run", "dry-run", "verify"] {
            let arguments =
                switch command {
                case "run": ws.runArguments(main)
                case "dry-run": ws.runArguments(main, ["--dry-run"])
                default: [command, ws.pipeline.path] + main.arguments
                }
            let result = try await ws.sluice(arguments)
            #expect(result.exitCode == 1, "\(command) on a \(damage.rawValue) state: \(result)")
            #expect(result.stderr.contains("damaged"), "\(command): the message says the state is damaged: \(result)")
            #expect(
                result.stderr.contains("verify --repair") || result.stderr.contains("new state"),
                "\(command): the message says how to recover: \(result)"
            )
            #expect(!result.stderr.contains("DecodingError"), "\(command): a raw decoding error: \(result)")
        }
    }
}
