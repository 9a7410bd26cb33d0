import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Debian's libtesseract uses OpenMP, and libgomp reads `OMP_THREAD_LIMIT` when it is loaded, before
/// `main`: setting it later has no effect, and OCR then costs 3–5× the CPU. So `sluice` makes sure it
/// starts with `OMP_THREAD_LIMIT=1`: when the variable is absent, it sets it and re-executes itself
/// (same arguments, same pid) before doing anything else. An explicit value from the user is kept.
enum OpenMPEnvironment {
    static func ensureSingleThreaded() {
        guard getenv("OMP_THREAD_LIMIT") == nil else { return }
        setenv("OMP_THREAD_LIMIT", "1", 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        // Only reached when exec failed: go on, slower but correct.
        FileHandle.standardError.write(
            Data(
                "sluice: could not re-execute with OMP_THREAD_LIMIT=1 (\(String(cString: strerror(errno)))); OCR will use more CPU\n"
                    .utf8
            )
        )
    }

    /// The thread limit libgomp actually uses (its `omp_get_thread_limit()`, looked up at run time), or
    /// nil when libgomp is not loaded.
    static var effectiveThreadLimit: Int? {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "omp_get_thread_limit") else { return nil }
        typealias Function = @convention(c) () -> Int32
        return Int(unsafeBitCast(symbol, to: Function.self)())
    }
}

/// `sluice openmp-limit` (hidden): prints the OpenMP thread limit in force in this process, for tests.
struct OpenMPLimitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "openmp-limit",
        abstract: "Internal: print OMP_THREAD_LIMIT and libgomp's effective thread limit.",
        shouldDisplay: false
    )

    func run() throws {
        let variable = ProcessInfo.processInfo.environment["OMP_THREAD_LIMIT"] ?? "unset"
        let effective = OpenMPEnvironment.effectiveThreadLimit.map(String.init) ?? "libgomp not loaded"
        print("OMP_THREAD_LIMIT=\(variable) omp_get_thread_limit=\(effective) pid=\(getpid())")
    }
}
