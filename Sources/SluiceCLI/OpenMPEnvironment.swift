import ArgumentParser
import Foundation
import Sluice
import SluiceCommandLine

#if canImport(Glibc)
import Glibc
#endif

/// Debian's libtesseract uses OpenMP, and libgomp reads `OMP_THREAD_LIMIT` when it is loaded: setting it
/// later has no effect, and OCR then costs 3–5× the CPU. libtesseract (and libgomp with it) is loaded at
/// the first OCR (`CTesseract`, dlopen), so `sluice` sets `OMP_THREAD_LIMIT=1` when the variable is absent,
/// first thing in `main`; an explicit value from the user is kept. Should libgomp already be loaded at
/// start (a library linked in the future that uses OpenMP), it re-executes itself with the variable set
/// (same arguments, same pid), as it did while libtesseract was linked.
enum OpenMPEnvironment {
    static func ensureSingleThreaded() {
        guard getenv("OMP_THREAD_LIMIT") == nil else { return }
        setenv("OMP_THREAD_LIMIT", "1", 1)
        guard effectiveThreadLimit != nil else { return }  // libgomp not loaded yet: it will read the variable
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
        // By name, without loading it: libtesseract loads libgomp privately (RTLD_LOCAL), out of the global
        // scope a plain dlsym searches.
        guard let library = dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD) else { return nil }
        defer { dlclose(library) }
        guard let symbol = dlsym(library, "omp_get_thread_limit") else { return nil }
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
        try OCREngine.loadLibrary()  // libgomp comes with it, reading the variable as OCR would
        let variable = ProcessInfo.processInfo.environment["OMP_THREAD_LIMIT"] ?? "unset"
        let effective = OpenMPEnvironment.effectiveThreadLimit.map(String.init) ?? "libgomp not loaded"
        print("OMP_THREAD_LIMIT=\(variable) omp_get_thread_limit=\(effective) pid=\(getpid())")
    }
}
