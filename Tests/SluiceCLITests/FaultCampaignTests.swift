import Foundation
import SluiceCore
import SluiceTesting
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The fault campaign of issue 14: kill -9 at every named crash point (`SLUICE_DEBUG_CRASH_AT`) and at
/// moments of a slow run, for `run`, `run --prune`, `run --reembed`, `sink drop` and `verify --repair`;
/// then the plain re-run (or the documented recovery) must end where an uninterrupted run of the same
/// command ends: the same `export` bytes, `verify` exit 0, and every document upserted, skipped or failed
/// with a reason (docs/DESIGN.md §4). Provider, store and bad-input scenarios are in the `+…` files.
///
/// The full sweep runs with `SLUICE_FAULT_CAMPAIGN=1` (`scripts/fault-campaign.sh`); without it, a few
/// representative scenarios run.
@Suite(.serialized)
struct FaultCampaignTests {
    /// A command under kill, and how it is set up, run and recovered.
    enum Command: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case run
        case prune = "run-prune"
        case reembed = "run-reembed"
        case sinkDrop = "sink-drop"
        case verifyRepair = "verify-repair"
        var testDescription: String { rawValue }
        /// Whether the command starts a pipeline run from its start (it logs "run started" then).
        var logsRunStart: Bool { self == .run || self == .prune || self == .reembed }
    }

    enum SinkKind: String, CaseIterable, Sendable {
        case local, jsonl
    }

    /// One command's world: a template target brought to the state the command starts from, copied for
    /// the reference and for every scenario (copying the state and store folders costs less than building
    /// them again).
    struct Lab {
        let ws: Workspace
        let command: Command
        let sink: SinkKind
        /// The documents of the corpus as the command sees it.
        var keys: [String] = []

        init(_ command: Command, sink: SinkKind, label: String) throws {
            ws = try Workspace("faults-\(label)")
            self.command = command
            self.sink = sink
        }

        func target(_ name: String) -> Workspace.Target {
            let local = ws.target(name)
            guard sink == .jsonl else { return local }
            let folder = local.state.deletingLastPathComponent()
            return Workspace.Target(
                state: local.state,
                index: local.index,
                sink: [
                    "--set", "sink.kind=jsonl", "--set",
                    "sink.path=\(folder.appendingPathComponent("store.jsonl").path)",
                ]
            )
        }

        /// Builds the template: a corpus, a first run, then what the command has to work on.
        mutating func prepare(seed: UInt64) async throws {
            keys = try Corpus.write(count: 14, into: ws.corpus, seed: seed, minBytes: 1_500, maxBytes: 6_000)
            let template = target("template")
            try await ws.run(template, expecting: 0)
            switch command {
            case .run, .prune, .reembed:
                keys = try Self.mutate(ws.corpus, keys: keys, seed: seed)
            case .sinkDrop:
                break
            case .verifyRepair:
                try await damage(template)
            }
        }

        /// Edits three documents, shrinks one, empties two (they fail, and their old vectors go), adds
        /// three and deletes two: every kind of work an incremental run does.
        static func mutate(_ corpus: URL, keys: [String], seed: UInt64) throws -> [String] {
            var rng = SeededGenerator(seed: seed ^ 0xFA17)
            var keys = keys
            for (offset, key) in keys.prefix(3).enumerated() {
                try Corpus.write(
                    Corpus.document(
                        index: 9_000 + offset,
                        markdown: key.hasSuffix(".md"),
                        bytes: rng.int(in: 1_500...6_000),
                        rng: &rng
                    ),
                    to: corpus.appendingPathComponent(key)
                )
            }
            let shrunk = corpus.appendingPathComponent(keys[3])
            let lines = try String(contentsOf: shrunk, encoding: .utf8).components(separatedBy: "\n")
            try Corpus.write(lines.prefix(max(3, lines.count / 3)).joined(separator: "\n") + "\n", to: shrunk)
            for key in keys[4...5] { try Data().write(to: corpus.appendingPathComponent(key)) }
            for offset in 0..<3 {
                let key = "added/new\(offset).txt"
                try Corpus.write(
                    Corpus.document(
                        index: 9_100 + offset,
                        markdown: false,
                        bytes: rng.int(in: 1_500...6_000),
                        rng: &rng
                    ),
                    to: corpus.appendingPathComponent(key)
                )
                keys.append(key)
            }
            for key in keys[6...7] { try FileManager.default.removeItem(at: corpus.appendingPathComponent(key)) }
            keys.removeSubrange(6...7)
            return keys.sorted()
        }

        /// Vectors missing behind the checkpoint's back and vectors it does not know, made through another
        /// state folder that shares the template's store (as an operator's mistake would).
        func damage(_ template: Workspace.Target) async throws {
            let victim = keys[5]
            let side = ws.root.appendingPathComponent("side-corpus")
            try FileManager.default.createDirectory(
                at: side.appendingPathComponent(victim).deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(
                at: ws.corpus.appendingPathComponent(victim),
                to: side.appendingPathComponent(victim)
            )
            let other = Workspace.Target(
                state: ws.root.appendingPathComponent("side-state"),
                index: template.index,
                sink: template.sink
            )
            let sideRun = ["run", ws.pipeline.path] + other.arguments + ["--source", side.path, "--quiet"]
            let first = try await ws.sluice(sideRun)
            try #require(first.exitCode == 0, "\(first)")
            try FileManager.default.removeItem(at: side.appendingPathComponent(victim))
            try Corpus.write(
                "An extra document that only the other state knows about.\n\nIt has two paragraphs.\n",
                to: side.appendingPathComponent("extra.txt")
            )
            let prune = try await ws.sluice(sideRun + ["--prune", "--allow-mass-delete"])
            try #require(prune.exitCode == 0, "\(prune)")
            let damaged = try await ws.sluice(["verify", ws.pipeline.path] + template.arguments)
            try #require(damaged.exitCode == 2, "the damage is not visible to verify: \(damaged)")
        }

        /// A copy of the template under `name`.
        func clone(_ name: String) throws -> Workspace.Target {
            let from = ws.target("template").state.deletingLastPathComponent()
            let to = ws.target(name).state.deletingLastPathComponent()
            try? FileManager.default.removeItem(at: to)
            try FileManager.default.createDirectory(
                at: to.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: from, to: to)
            return target(name)
        }

        /// The command line of the command on `target`.
        func arguments(_ target: Workspace.Target, _ extra: [String] = []) -> [String] {
            switch command {
            case .run: ws.runArguments(target, ["--allow-mass-delete"] + extra)
            case .prune: ws.runArguments(target, ["--prune", "--allow-mass-delete"] + extra)
            case .reembed: ws.runArguments(target, ["--reembed", "--allow-mass-delete"] + extra)
            case .sinkDrop: ["sink", "drop", "--yes", ws.pipeline.path] + target.arguments + extra
            case .verifyRepair:
                ["verify", "--repair", "--allow-mass-delete", ws.pipeline.path] + target.arguments + extra
            }
        }

        /// The documented way on after the command was interrupted: the same command again (`sink drop` is
        /// completed by the next run, docs/OPERATIONS.md), then, after a drop, the run that loads again.
        func recover(_ target: Workspace.Target) async throws -> [CommandResult] {
            switch command {
            case .run, .prune, .reembed:
                return [
                    try await ws.sluice(
                        ws.runArguments(
                            target,
                            command == .prune ? ["--prune", "--allow-mass-delete"] : ["--allow-mass-delete"]
                        ),
                        timeout: .seconds(300)
                    )
                ]
            case .sinkDrop:
                return [try await ws.sluice(ws.runArguments(target, ["--allow-mass-delete"]), timeout: .seconds(300))]
            case .verifyRepair:
                return [try await ws.sluice(arguments(target), timeout: .seconds(300))]
            }
        }

        /// The uninterrupted reference: the command on a copy of the template, then what a user runs next
        /// (a drop is followed by a run).
        func reference() async throws -> Data {
            let reference = try clone("reference")
            let result = try await ws.sluice(arguments(reference), timeout: .seconds(300))
            try #require([0, 2].contains(result.exitCode), "the uninterrupted command failed: \(result)")
            if command == .sinkDrop {
                let load = try await ws.sluice(ws.runArguments(reference), timeout: .seconds(300))
                try #require(load.exitCode == 0, "\(load)")
            }
            return try await ws.export(reference)
        }

        /// The end state after a fault and the recovery: equal to the reference, consistent for `verify`,
        /// and every document of the corpus indexed or failed with a reason.
        func check(
            _ target: Workspace.Target,
            recovery: [CommandResult],
            expected: Data,
            _ scenario: Scenario
        ) async throws {
            for result in recovery {
                scenario.expect(result.exitCode == 0 || result.exitCode == 2, "recovery: \(result)")
            }
            scenario.expectSameExport(try await ws.export(target), expected, "after the fault and the recovery")
            let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
            scenario.expect(verify.exitCode == 0, "verify after the recovery: \(verify)")
            try await Self.expectEveryDocumentAccounted(ws, target, keys: keys, scenario)
        }

        /// No silent loss: every document is indexed (with vectors in the export) or failed with a reason.
        static func expectEveryDocumentAccounted(
            _ ws: Workspace,
            _ target: Workspace.Target,
            keys: [String],
            _ scenario: Scenario
        ) async throws {
            let status = try await ws.status(target)
            let failures = status.failures
            let exported = Set(try Export.records(try await ws.export(target)).map(\.documentKey))
            for key in keys {
                if let reason = failures[key] {
                    scenario.expect(
                        !reason.trimmingCharacters(in: .whitespaces).isEmpty,
                        "\(key) failed without a reason"
                    )
                } else {
                    scenario.expect(
                        exported.contains(key),
                        "\(key) is neither failed nor in the store:\n\(status.text)"
                    )
                }
            }
        }
    }

    // MARK: Kill points

    /// The named crash points each command reaches on its lab, with the occurrences to kill at
    /// (`<point>@<n>`: the n-th time the point is reached).
    static func crashPoints(_ command: Command) -> [String] {
        let upsert = ["upsert.pending-recorded@1", "upsert.sink-written@1", "commit.committed@1"]
        switch command {
        case .run:
            return upsert + [
                "upsert.pending-recorded@4", "upsert.sink-written@4", "upsert.replaced-vectors-deleted@1",
                "upsert.replaced-vectors-deleted@2", "upsert.stale-vectors-deleted@1", "commit.committed@3",
            ]
        case .prune:
            return ["prune.vectors-deleted@1", "upsert.stale-vectors-deleted@1", "upsert.replaced-vectors-deleted@1"]
                + upsert
        case .reembed: return ["reembed.midway@1", "upsert.sink-written@5"] + upsert
        case .sinkDrop: return ["sink-drop.midway@1"]
        case .verifyRepair: return ["verify.unknown-deleted@1", "verify.missing-marked@1"] + upsert
        }
    }

    struct KillPoint: Sendable, CustomTestStringConvertible {
        var command: Command
        var point: String
        var sink: SinkKind
        var testDescription: String { "\(command.rawValue) @ \(point) (\(sink.rawValue))" }
    }

    static let allKillPoints: [KillPoint] = SinkKind.allCases.flatMap { sink in
        Command.allCases.flatMap { command in
            crashPoints(command).map { KillPoint(command: command, point: $0, sink: sink) }
        }
    }

    /// The always-on subset: one store write and one checkpoint step of an incremental run, a prune, and
    /// a repair.
    static let representativeKillPoints: [KillPoint] = [
        KillPoint(command: .run, point: "upsert.sink-written@1", sink: .jsonl),
        KillPoint(command: .prune, point: "prune.vectors-deleted@1", sink: .local),
        KillPoint(command: .verifyRepair, point: "verify.unknown-deleted@1", sink: .jsonl),
    ]

    static var sweptKillPoints: [KillPoint] {
        let representative = Set(representativeKillPoints.map(\.testDescription))
        return allKillPoints.filter { !representative.contains($0.testDescription) }
    }

    @Test(
        "kill -9 at a named point, then the recovery: the end state of an uninterrupted run",
        arguments: representativeKillPoints
    )
    func killAtPoint(_ kill: KillPoint) async throws {
        try await Self.killAtPoints([kill])
    }

    @Test(
        "the sweep: kill -9 at every named point of every command, on the local and the JSONL store",
        .enabled(if: FaultCampaign.sweep),
        arguments: Command.allCases
    )
    func killAtEveryPoint(_ command: Command) async throws {
        try await Self.killAtPoints(Self.sweptKillPoints.filter { $0.command == command })
    }

    /// Runs the kill scenarios of one command (grouped: one lab and one reference per command and store).
    static func killAtPoints(_ kills: [KillPoint]) async throws {
        for sink in SinkKind.allCases {
            let group = kills.filter { $0.sink == sink }
            guard let first = group.first else { continue }
            var lab = try Lab(first.command, sink: sink, label: "\(first.command.rawValue)-\(sink.rawValue)")
            defer { lab.ws.cleanUp() }
            try await lab.prepare(seed: 0x5EED_1401)
            let expected = try await lab.reference()
            for (index, kill) in group.enumerated() {
                try await FaultCampaign.scenario(.fault, "kill -9 at \(kill.testDescription)") { scenario in
                    let target = try lab.clone("victim-\(index)")
                    let crashed = try await lab.ws.sluice(
                        lab.arguments(target, slowRunSettings),
                        environment: ["SLUICE_DEBUG_CRASH_AT": kill.point],
                        timeout: .seconds(300)
                    )
                    scenario.expect(
                        crashed.signaled && crashed.status == SIGKILL,
                        "the point was not reached: \(crashed)"
                    )
                    let recovery = try await lab.recover(target)
                    try await lab.check(target, recovery: recovery, expected: expected, scenario)
                }
            }
        }
    }

    // MARK: Kills at moments of a slow run

    /// Fractions of the command's own uninterrupted duration (measured first, on this machine, now) at
    /// which it is killed; past 1 the kill lands after the end, which must converge as well.
    static let allFractions: [Double] = [0.05, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.2]

    @Test("kill -9 in the middle of a slow incremental run, then a plain re-run: the end state of an uninterrupted run")
    func killMidRun() async throws {
        try await Self.killAtMoments(.run, sink: .local, fractions: [0.5])
    }

    @Test(
        "the sweep: kill -9 at moments spread over a slow run of every command, on the local and the JSONL store",
        .enabled(if: FaultCampaign.sweep),
        arguments: Command.allCases
    )
    func killAtMoments(_ command: Command) async throws {
        for sink in SinkKind.allCases {
            let fractions =
                command == .run && sink == .local ? Self.allFractions.filter { $0 != 0.5 } : Self.allFractions
            try await Self.killAtMoments(command, sink: sink, fractions: fractions)
        }
    }

    static func killAtMoments(_ command: Command, sink: SinkKind, fractions: [Double]) async throws {
        var lab = try Lab(command, sink: sink, label: "moments-\(command.rawValue)-\(sink.rawValue)")
        defer { lab.ws.cleanUp() }
        try await lab.prepare(seed: 0x5EED_1402)
        let expected = try await lab.reference()

        // The duration to spread the kills over: the slow command, uninterrupted, from its anchor (the
        // "run started" line, or the start of the process for commands that do not begin with a run).
        let timing = try lab.clone("timing")
        let timed = try lab.ws.start(lab.arguments(timing, slowRunSettings))
        if command.logsRunStart {
            try #require(
                await timed.waitForStderr(containing: "run started", timeout: .seconds(300)),
                "\(timed.stderrSoFar)"
            )
        }
        let anchor = ContinuousClock.now
        let timedResult = try await timed.wait(timeout: .seconds(600))
        try #require([0, 2].contains(timedResult.exitCode), "\(timedResult)")
        let duration = ContinuousClock.now - anchor

        for (index, fraction) in fractions.enumerated() {
            let name = "kill -9 at \(Int(fraction * 100))% of a slow \(command.rawValue) (\(sink.rawValue))"
            try await FaultCampaign.scenario(.fault, name) { scenario in
                let target = try lab.clone("victim-\(index)")
                let process = try lab.ws.start(lab.arguments(target, slowRunSettings))
                if command.logsRunStart {
                    let started = await process.waitForStderr(containing: "run started", timeout: .seconds(300))
                    scenario.expect(started || !process.isRunning, "no 'run started': \(process.stderrSoFar)")
                }
                try await Task.sleep(for: duration * fraction)
                process.send(SIGKILL)
                let result = try await process.wait(timeout: .seconds(300))
                if result.signaled {
                    scenario.notes.append("killed")
                } else {
                    // It ended before the kill: then it must have ended well.
                    scenario.notes.append("ended before the kill")
                    scenario.expect(result.exitCode == 0 || result.exitCode == 2, "\(result)")
                }
                let recovery = try await lab.recover(target)
                try await lab.check(target, recovery: recovery, expected: expected, scenario)
            }
        }
    }
}
