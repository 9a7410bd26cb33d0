import Testing

@testable import SluiceExtract

/// Settings that only work from process start reach every extract worker; the user's own win.
@Suite struct WorkerEnvironmentTests {
    @Test func workersStartSingleThreadedWithADeeperMallocCache() {
        let environment = WorkerProcess.workerEnvironment(["PATH": "/usr/bin"])
        #expect(environment["PATH"] == "/usr/bin")
        #expect(environment["OMP_THREAD_LIMIT"] == "1")
        #expect(environment["OPENBLAS_NUM_THREADS"] == "1")
        #expect(environment["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=1000")
    }

    @Test("Tesseract's choice of SIMD kernel (DOTPRODUCT) reaches the workers, as it reaches the tesseract CLI")
    func tesseractsKernelChoiceIsPassed() {
        #expect(WorkerProcess.workerEnvironment(["DOTPRODUCT": "avx2"])["DOTPRODUCT"] == "avx2")
        #expect(WorkerProcess.workerEnvironment([:])["DOTPRODUCT"] == nil)
    }

    @Test func theUsersTunablesAreKeptAndTheirCacheSettingWins() {
        let other = WorkerProcess.workerEnvironment(["GLIBC_TUNABLES": "glibc.malloc.arena_max=2"])
        #expect(other["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=1000:glibc.malloc.arena_max=2")
        let own = WorkerProcess.workerEnvironment([
            "GLIBC_TUNABLES": "glibc.malloc.tcache_count=0", "OPENBLAS_NUM_THREADS": "4",
        ])
        #expect(own["GLIBC_TUNABLES"] == "glibc.malloc.tcache_count=0")
        #expect(own["OPENBLAS_NUM_THREADS"] == "4")
    }

    @Test("workers get an allow-list of the environment: no API key, database password or other secret of the parent")
    func secretsStayInTheParent() {
        let parent = [
            "PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TMPDIR": "/tmp/x",
            "TESSDATA_PREFIX": "/data/tessdata", "SLUICE_DEBUG_WORKER_HANG": "marker",
            "OPENAI_API_KEY": "sk-secret", "PGPASSWORD": "pg-secret", "SLUICE_TEST_PG_PASSWORD": "pw",
            "AWS_SECRET_ACCESS_KEY": "aws", "MY_PIPELINE_KEY": "k", "LD_PRELOAD": "/tmp/evil.so",
        ]
        let environment = WorkerProcess.workerEnvironment(parent)
        for name in ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TESSDATA_PREFIX", "SLUICE_DEBUG_WORKER_HANG"] {
            #expect(environment[name] == parent[name], "\(name) is what a worker needs")
        }
        for name in [
            "OPENAI_API_KEY", "PGPASSWORD", "SLUICE_TEST_PG_PASSWORD", "AWS_SECRET_ACCESS_KEY", "MY_PIPELINE_KEY",
            "LD_PRELOAD",
        ] {
            #expect(environment[name] == nil, "\(name) must not reach a worker")
        }
        #expect(
            Set(environment.keys)
                == Set([
                    "PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TESSDATA_PREFIX", "SLUICE_DEBUG_WORKER_HANG",
                    "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS", "GLIBC_TUNABLES",
                ])
        )
    }
}
