@testable import SluiceExtract
import Testing

/// Settings that only work from process start reach every extract worker; the user's own win.
@Suite struct WorkerEnvironmentTests {
    @Test func workersStartSingleThreadedWithADeeperMallocCache() {
        let environment = WorkerProcess.workerEnvironment(["PATH": "/usr/bin"])
        #expect(environment["PATH"] == "/usr/bin")
        #expect(environment["OMP_THREAD_LIMIT"] == "1")
        #expect(environment["OPENBLAS_NUM_THREADS"] == "1")
        #expect(environment["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=1000")
    }

    @Test func theUsersTunablesAreKeptAndTheirCacheSettingWins() {
        let other = WorkerProcess.workerEnvironment(["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"])
        #expect(other["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=1000:glibc.malloc.arena_max=2")
        let own = WorkerProcess.workerEnvironment(["GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "OPENBLAS_NUM_THREADS": "4"])
        #expect(own["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=0")
        #expect(own["OPENBLAS_NUM_THREADS"] == "4")
    }
}
