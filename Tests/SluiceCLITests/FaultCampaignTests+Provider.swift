import Foundation
import SluiceCore
import Testing

/// The campaign against the embedding provider (Sources/SluiceTesting/StandIns/openai_standin.py): answers with status
/// 200 that are broken (garbage, cut short, an error object, the wrong number of embeddings, the wrong
/// dimension, strings, values that are not finite), and faults of the transport (5xx, resets, 429 storms
/// with absurd Retry-After values). A broken answer fails the documents of its batch with a reason and the
/// run goes on (exit 2); the next run against a sound provider ends where a fault-free run ends.
extension FaultCampaignTests {
    struct ProviderCase: Sendable, CustomTestStringConvertible {
        var name: String
        var category: FaultCampaign.Category
        var server: [String]
        var extra: [String] = []
        /// The exit codes the faulty run may end with (docs/DESIGN.md §7).
        var exits: Set<Int32>
        var testDescription: String { name }
    }

    static let badAnswerKinds = [
        "garbage", "truncated", "empty", "error", "wrong-count", "extra", "repeated-index", "wrong-dims", "strings",
        "not-a-list",
    ]

    static let allProviderCases: [ProviderCase] = {
        var cases: [ProviderCase] = []
        for kind in badAnswerKinds {
            for every in [1, 3] {
                cases.append(
                    ProviderCase(
                        name: "a 200 answer: \(kind), every \(every == 1 ? "request" : "\(every)rd request")",
                        category: .input,
                        server: ["--bad-answer", kind, "--bad-answer-every", String(every)],
                        exits: every == 1 ? [2] : [0, 2]
                    )
                )
            }
        }
        for (value, format) in [("nan", "base64"), ("-inf", "base64"), ("1e39", "float"), ("nan", "float")] {
            // Every input has a space: every vector is poisoned.
            cases.append(
                ProviderCase(
                    name: "a 200 answer: \(value) in every vector (\(format))",
                    category: .input,
                    server: ["--poison-text", " ", "--poison-value=\(value)"],
                    extra: ["--set", "embed.encoding_format=\(format)"],
                    exits: [2]
                )
            )
        }
        for header in [
            ["--retry-after", "1e20"], ["--retry-after", "inf"], ["--retry-after", "-5"], ["--retry-after", "soon"],
            ["--retry-after-ms", "1e30"], ["--retry-after", ""],
        ] {
            cases.append(
                ProviderCase(
                    name: "a 429 storm with \(header[0]) \(header[1].debugDescription)",
                    category: .fault,
                    server: ["--storm", "3"] + header,
                    extra: ["--set", "embed.max_retry_after_seconds=1"],
                    exits: [0]
                )
            )
        }
        cases.append(
            ProviderCase(
                name: "30% 5xx answers",
                category: .fault,
                server: ["--error-rate", "0.3", "--seed", "3"],
                exits: [0]
            )
        )
        cases.append(
            ProviderCase(
                name: "20% connection resets",
                category: .fault,
                server: ["--reset-rate", "0.2", "--seed", "4"],
                exits: [0]
            )
        )
        cases.append(
            ProviderCase(
                name: "slow answers past the client's timeout",
                category: .fault,
                server: ["--slow-rate", "0.3", "--slow-ms", "3000", "--seed", "5"],
                exits: [0]
            )
        )
        return cases
    }()

    static let representativeProviderCases = [
        "a 200 answer: wrong-count, every request", "a 200 answer: garbage, every 3rd request",
    ]

    @Test(
        "a broken provider answer fails its documents with a reason; the next run converges",
        arguments: representativeProviderCases
    )
    func providerAnswer(_ name: String) async throws {
        try await Self.provider(try #require(Self.allProviderCases.first { $0.name == name }))
    }

    @Test(
        "the sweep: every broken answer and transport fault of the provider",
        .enabled(if: FaultCampaign.sweep),
        arguments: allProviderCases.filter { !representativeProviderCases.contains($0.name) }
    )
    func providerSweep(_ faulty: ProviderCase) async throws {
        try await Self.provider(faulty)
    }

    static func provider(_ faulty: ProviderCase) async throws {
        let remote = RemoteEmbedderCLITests()
        let ws = try Workspace("faults-provider")
        defer { ws.cleanUp() }
        let keys = try Corpus.write(count: 10, into: ws.corpus, seed: 0x5EED_1410, maxBytes: 4_000)
        let sound = try await remote.server()
        let reference = ws.target("reference")
        let first = try await remote.run(ws, reference, remote.settings(sound, batch: 4, parallelism: 2))
        try #require(first.exitCode == 0, "\(first)")
        let expected = try await ws.export(reference)

        try await FaultCampaign.scenario(faulty.category, "provider: \(faulty.name)") { scenario in
            let server = try await remote.server(faulty.server)
            let target = ws.target("faulty")
            let result = try await remote.run(
                ws,
                target,
                remote.settings(server, batch: 4, parallelism: 2) + faulty.extra
            )
            scenario.expect(
                result.exitCode.map { faulty.exits.contains($0) } ?? false,
                "exit \(String(describing: result.exitCode)), expected \(faulty.exits.sorted()): \(result)"
            )
            scenario.expect(!result.stderr.contains("Fatal error"), "a crash: \(result)")
            // What was stored is what a sound provider gives, and every document is accounted for.
            let stored = try Export.records(try await ws.export(target))
            let reference = Dictionary(
                try Export.records(expected).map { ($0.id, $0) },
                uniquingKeysWith: { first, _ in first }
            )
            scenario.expect(
                stored.allSatisfy { reference[$0.id] == $0 },
                "a stored record differs from the sound provider's"
            )
            let status = try await ws.status(target)
            let failed = Set(status.failures.keys)
            let indexed = Set(stored.map(\.documentKey))
            scenario.expect(failed.union(indexed) == Set(keys), "documents neither stored nor failed:\n\(status.text)")
            if result.exitCode == 0 { scenario.expect(failed.isEmpty, "exit 0 with failed documents:\n\(status.text)") }
            for (key, reason) in status.failures {
                scenario.expect(
                    reason.contains(":") && reason.count > 8,
                    "\(key) failed without a clear reason: \(reason)"
                )
            }

            let recovered = try await remote.run(ws, target, remote.settings(sound, batch: 4, parallelism: 2))
            scenario.expect(recovered.exitCode == 0, "the run against a sound provider: \(recovered)")
            scenario.expectSameExport(try await ws.export(target), expected, "after a run against a sound provider")
            let verify = try await ws.sluice(["verify", ws.pipeline.path] + target.arguments)
            scenario.expect(verify.exitCode == 0, "verify: \(verify)")
        }
    }
}
