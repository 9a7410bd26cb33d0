import Foundation
import SluiceTesting
import Testing

/// `sluice serve` runs `sluice-serve`, the server's own executable, installed beside `sluice`
/// (docs/INSTALL.md): the other serve suites drive it through `sluice serve` with both built; these cover an
/// installation with one of the two missing, each copied alone into a folder of its own.
@Suite struct ServeExecutableCLITests {
    /// A copy of the built executable `name` alone in a new folder of `ws`.
    static func alone(_ name: String, in ws: Workspace) throws -> URL {
        let folder = ws.file("alone-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent(name)
        let built = try SluiceExecutable.url().deletingLastPathComponent().appendingPathComponent(name)
        try FileManager.default.copyItem(at: built, to: copy)
        return copy
    }

    @Test("sluice serve without sluice-serve beside it: exit 1, saying how to build and install it")
    func serveWithoutTheServer() async throws {
        let ws = try Workspace("serve-no-server")
        defer { ws.cleanUp() }
        let sluice = try Self.alone("sluice", in: ws)
        let result = try await ws.start(["serve", ws.pipeline.path, "--port", "0"], executable: sluice)
            .wait(timeout: .seconds(60))
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("sluice-serve"), "\(result)")
        #expect(result.stderr.contains("--product sluice-serve"), "\(result)")
        #expect(!result.stdout.contains("listening on"), "\(result)")

        // The options are still sluice's to explain and to check.
        let help = try await ws.start(["serve", "--help"], executable: sluice).wait(timeout: .seconds(60))
        #expect(help.exitCode == 0, "\(help)")
        #expect(help.stdout.contains("--port") && help.stdout.contains("sluice-serve"), "\(help)")
        let typo = try await ws.start(["serve", "--prot", "1"], executable: sluice).wait(timeout: .seconds(60))
        #expect(typo.exitCode == 1, "\(typo)")
    }

    @Test("sluice-serve without sluice beside it: exit 1 before it listens (its runs need that sluice)")
    func serverWithoutSluice() async throws {
        let ws = try Workspace("serve-no-sluice")
        defer { ws.cleanUp() }
        let server = try Self.alone("sluice-serve", in: ws)
        let result = try await ws.start([ws.pipeline.path, "--port", "0"], executable: server)
            .wait(timeout: .seconds(60))
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("sluice beside it"), "\(result)")
        #expect(!result.stdout.contains("listening on"), "\(result)")
    }
}
