import Foundation
import SluiceClient
import SluiceCore
import SluiceTesting
import Testing

/// Duplicate lists under access control (docs/ACCESS.md): a search collapses identical texts into one
/// result that lists the other copies, and those lists come from the readable records only, so a copy in a
/// document the caller may not read is never named. Checked on the local store here and on every other
/// store by `ServeAccessMatrixCLITests`, in every mode each store has.
extension ServeAccessCLITests {
    /// A copy of `eng/design-0.md` that the hr group reads (by its path): one text in two documents.
    static let copy = "hr/design-copy.md"

    /// Writes ``copy`` into the corpus of ``corpus(_:)``.
    static func writeCopy(_ ws: Workspace) throws {
        try Corpus.write(
            "Design 0 of the build cache; one line on salary for contractors number 0.",
            to: ws.corpus.appendingPathComponent(copy)
        )
    }

    /// The copy and its original collapse into one result for the operator, never for a group: eng sees its
    /// design without the hr copy in its duplicates, hr the copy without eng's design, in each of `modes`.
    static func expectCopiesHidden(
        operator admin: SluiceClient,
        eng: SluiceClient,
        hr: SluiceClient,
        modes: [String],
        _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let design = "Design 0 of the build cache contractors"
        for mode in modes {
            let both = try await admin.search(SearchRequest(query: design, k: 3, mode: mode)).results
            let collapsed = both.first { [copy, "eng/design-0.md"].contains($0.documentKey) }
            #expect(
                collapsed?.duplicates.count == 1,
                "\(label) \(mode): \(both.map { ($0.documentKey, $0.duplicates) })",
                sourceLocation: sourceLocation
            )
            for (client, own, other) in [(eng, "eng/design-0.md", copy), (hr, copy, "eng/design-0.md")] {
                let hits = try await client.search(SearchRequest(query: design, k: 3, mode: mode)).results
                #expect(
                    hits.contains { $0.documentKey == own },
                    "\(label) \(mode): \(hits.map(\.documentKey))",
                    sourceLocation: sourceLocation
                )
                #expect(!hits.contains { $0.documentKey == other }, "\(label) \(mode)", sourceLocation: sourceLocation)
                #expect(
                    hits.allSatisfy { $0.duplicates.isEmpty },
                    "\(label) \(mode): \(hits.map { ($0.documentKey, $0.duplicates) })",
                    sourceLocation: sourceLocation
                )
            }
        }
    }

    @Test("duplicate lists on the local store: a copy in a document of another group is never named, in every mode")
    func duplicatesHoldReadableCopiesOnly() async throws {
        let ws = try Workspace("serve-access-duplicates")
        defer { ws.cleanUp() }
        let target = try Self.corpus(ws)
        try Self.writeCopy(ws)
        try await ws.run(target, expecting: 0)
        let server = try await Self.serve(ws, target)
        try await Self.expectCopiesHidden(
            operator: server.client(token: Self.operatorToken),
            eng: server.client(token: Self.engKey),
            hr: server.client(token: Self.hrKey),
            modes: ["vector", "keyword", "hybrid"],
            "local"
        )
        let result = try await server.stop()
        #expect(result.exitCode == 0, "\(result.stderr.suffix(2000))")
    }
}
