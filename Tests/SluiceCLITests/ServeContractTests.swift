import Foundation
import SluiceTesting
import Testing

/// The API contract: schemathesis fuzzes a running `sluice serve` from docs/openapi.json
/// (scripts/api-contract.sh URL): no answer may be a 5xx, every answer must match the document.
@Suite(.serialized)
struct ServeContractTests {
    static var schemathesis: URL {
        let cache =
            ProcessInfo.processInfo.environment["SLUICE_CACHE_DIR"]
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/sluice").path
        return URL(fileURLWithPath: cache).appendingPathComponent("venv/bin/schemathesis")
    }

    @Test("schemathesis finds no 5xx and no answer outside the OpenAPI document")
    func contract() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.schemathesis.path),
            "schemathesis is missing: run scripts/setup.sh test"
        )
        let ws = try Workspace("serve-contract")
        defer { ws.cleanUp() }
        let target = ws.target("t")
        _ = try await ServeCLITests.indexed(ws, target)
        let server = try await ServeProcess.start(ws, target)
        let script = Corpus.repositoryRoot.appendingPathComponent("scripts/api-contract.sh")
        let process = Process()
        process.executableURL = script
        process.arguments = [server.baseURL.absoluteString]
        let output = ws.file("contract.log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let exit = await Task.detached { ProcessExit.wait(for: process) }.value
        try? handle.close()
        let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
        #expect(exit.status == 0 && !exit.signaled, "schemathesis found failures:\n\(log.suffix(6000))")
        _ = try await server.stop()
    }
}
