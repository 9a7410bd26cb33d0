import ArgumentParser
import CLibCrypto
import Foundation
import Synchronization

/// `sluice crypto-exit-probe` (hidden): exits while threads are inside libcrypto, as a command that ends during
/// a store's or an HTTP client's TLS work does; for the test that the process then exits cleanly
/// (``SluiceCommandLine/OpenSSLAtExit``).
struct CryptoExitProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crypto-exit-probe",
        abstract: "Internal: exit while threads are inside libcrypto (a test of a clean exit).",
        shouldDisplay: false
    )

    @Option(help: "Threads calling libcrypto without pause.")
    var threads = 2

    func run() throws {
        let started = Atomic<Int>(0)
        for _ in 0..<max(1, threads) {
            Thread {
                var counted = false
                while true {
                    guard sluice_crypto_exercise() == 1 else { fatalError("libcrypto's HMAC-SHA256 failed") }
                    if !counted {
                        started.add(1, ordering: .releasing)
                        counted = true
                    }
                }
            }.start()
        }
        // Every thread is in its loop before the exit: the exit meets them inside libcrypto.
        while started.load(ordering: .acquiring) < max(1, threads) { sched_yield() }
        throw ExitCode.success
    }
}
