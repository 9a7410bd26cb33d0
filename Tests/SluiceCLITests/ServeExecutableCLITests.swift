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
        // Written through a descriptor closed on exec: a process another test spawns meanwhile must not keep
        // the copy open for writing, or executing the copy fails with ETXTBSY ("Text file busy", seen in CI).
        let bytes = try Data(contentsOf: built)
        let fd = open(copy.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown) }
        defer { close(fd) }
        let written = bytes.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        guard written else { throw CocoaError(.fileWriteUnknown) }
        return copy
    }

    /// Starts `arguments` with `executable`, again while the kernel says the file is busy (ETXTBSY): between
    /// another test's fork and its exec, the child holds every descriptor the process had, ours included.
    static func start(_ ws: Workspace, _ arguments: [String], executable: URL) async throws -> SluiceProcess {
        var attempt = 0
        while true {
            do {
                return try ws.start(arguments, executable: executable)
            } catch let error as NSError
                where attempt < 20
                && (error.userInfo[NSUnderlyingErrorKey] as? NSError)?.code == Int(ETXTBSY)
            {
                attempt += 1
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    @Test("sluice serve without sluice-serve beside it: exit 1, saying how to build and install it")
    func serveWithoutTheServer() async throws {
        let ws = try Workspace("serve-no-server")
        defer { ws.cleanUp() }
        let sluice = try Self.alone("sluice", in: ws)
        let result = try await Self.start(ws, ["serve", ws.pipeline.path, "--port", "0"], executable: sluice)
            .wait(timeout: .seconds(60))
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("sluice-serve"), "\(result)")
        #expect(result.stderr.contains("--product sluice-serve"), "\(result)")
        #expect(!result.stdout.contains("listening on"), "\(result)")

        // The options are still sluice's to explain and to check.
        let help = try await Self.start(ws, ["serve", "--help"], executable: sluice).wait(timeout: .seconds(60))
        #expect(help.exitCode == 0, "\(help)")
        #expect(help.stdout.contains("--port") && help.stdout.contains("sluice-serve"), "\(help)")
        let typo = try await Self.start(ws, ["serve", "--prot", "1"], executable: sluice).wait(timeout: .seconds(60))
        #expect(typo.exitCode == 1, "\(typo)")
    }

    @Test("sluice-serve without sluice beside it: exit 1 before it listens (its runs need that sluice)")
    func serverWithoutSluice() async throws {
        let ws = try Workspace("serve-no-sluice")
        defer { ws.cleanUp() }
        let server = try Self.alone("sluice-serve", in: ws)
        let result = try await Self.start(ws, [ws.pipeline.path, "--port", "0"], executable: server)
            .wait(timeout: .seconds(60))
        #expect(result.exitCode == 1, "\(result)")
        #expect(result.stderr.contains("sluice beside it"), "\(result)")
        #expect(!result.stdout.contains("listening on"), "\(result)")
    }
}
