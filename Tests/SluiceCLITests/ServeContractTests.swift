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
        let server = try await ServeCLITests.served(ws)
        let (exit, log) = try await Self.runScript([server.baseURL.absoluteString], in: ws)
        #expect(exit.status == 0 && !exit.signaled, "schemathesis found failures:\n\(log.suffix(6000))")
        _ = try await server.stop()
    }

    @Test(
        "with credentials and access control on: a key, a JWT and the operator's token each pass the contract, a missing or wrong one is refused"
    )
    func contractWithAuth() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.schemathesis.path),
            "schemathesis is missing: run scripts/setup.sh test"
        )
        let ws = try Workspace("serve-contract-auth")
        defer { ws.cleanUp() }
        let (exit, log) = try await Self.runScript(
            ["--auth"],
            in: ws,
            environment: ["SLUICE_BINARY": try SluiceExecutable.url().path]
        )
        #expect(exit.status == 0 && !exit.signaled, "the contract with auth failed:\n\(log.suffix(8000))")
        for who in ["key", "jwt", "operator"] { #expect(log.contains("api-contract: as the \(who)"), "\(who)") }
        #expect(log.contains("api-contract: auth checks passed"), "\(log.suffix(3000))")
    }

    /// Runs scripts/api-contract.sh with `arguments` to its end: its exit and its output.
    static func runScript(
        _ arguments: [String],
        in ws: Workspace,
        environment: [String: String] = [:]
    ) async throws -> (exit: ProcessExit, log: String) {
        let script = Corpus.repositoryRoot.appendingPathComponent("scripts/api-contract.sh")
        let process = Process()
        process.executableURL = script
        process.arguments = arguments
        process.currentDirectoryURL = Corpus.repositoryRoot
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let output = ws.file("contract.log")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let exit = await Task.detached { ProcessExit.wait(for: process) }.value
        try? handle.close()
        return (exit, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }
}
