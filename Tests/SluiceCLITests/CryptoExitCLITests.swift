import Foundation
import Testing

/// A `sluice` command that ends while other threads are inside libcrypto exits with its own code, not a crash.
/// Seen on `sluice generation promote` with pgvector: exit 8 decided, then SIGABRT on a `sl-pgvector` thread,
/// because OpenSSL's `atexit` handler freed libcrypto's state under the connection threads that were ending.
/// `sluice crypto-exit-probe` exits while two threads call libcrypto without pause; before the fix about one
/// probe in seven crashed on a quiet machine.
@Suite struct CryptoExitCLITests {
    @Test("exiting while threads are inside libcrypto: exit 0 every time, no crash")
    func exitWhileThreadsUseLibcrypto() async throws {
        let ws = try Workspace("crypto-exit")
        defer { ws.cleanUp() }
        var crashes: [String] = []
        for attempt in 0..<40 {
            let result = try await ws.sluice(
                ["crypto-exit-probe", "--threads", "2"],
                environment: ["SWIFT_BACKTRACE": "enable=no"]
            )
            if result.exitCode != 0 { crashes.append("attempt \(attempt): \(result)") }
        }
        #expect(crashes.isEmpty, "\(crashes.count) of 40 probes did not exit 0: \(crashes.first ?? "")")
    }
}
