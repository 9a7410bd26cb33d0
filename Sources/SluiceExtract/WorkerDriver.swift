import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// One thread of an ``ExtractWorkerPool``: it owns one worker process at a time, feeds it jobs, and
/// replaces it when it crashes or overruns a deadline.
struct WorkerDriver {
    let command: ExtractWorkerPool.Command
    let state: PoolState
    private var process: WorkerProcess?
    /// Whether `process` was started from the command's fallback.
    private var processIsFallback = false
    /// Whether `process`'s hello was read (and reported this build's compatibility).
    private var greeted = false

    init(command: ExtractWorkerPool.Command, state: PoolState) {
        self.command = command
        self.state = state
    }

    mutating func run() {
        defer {
            process?.stop()
            state.driverExited()
        }
        while let job = state.take() {
            if job.batch.isAbandoned { continue }
            if ContinuousClock.now >= job.deadline {
                job.batch.complete(
                    job.index,
                    with: .failure(SluiceError(.timeout, "extraction took longer than extract.timeout_seconds"))
                )
                continue
            }
            job.batch.complete(job.index, with: perform(job))
        }
    }

    private mutating func perform(_ job: Job) -> Result<ExtractWorkerProtocol.Response, SluiceError> {
        if process == nil {
            let program = state.usesFallback ? fallbackCommand : nil
            do {
                process = try WorkerProcess.spawn(program ?? command)
            } catch {
                return .failure(SluiceError.wrap(error, as: .extractionFailed))
            }
            processIsFallback = program != nil
            greeted = false
        }
        guard var worker = process else { return .failure(SluiceError(.extractionFailed, "no worker")) }
        let what = Self.describe(job.request)
        let line: [UInt8]
        do {
            line = try ExtractWorkerProtocol.encodeLine(job.request)
        } catch {
            return .failure(SluiceError(.extractionFailed, "cannot encode a worker request: \(error)"))
        }
        guard writeAll(worker.input, line) else {
            let status = worker.kill()
            process = nil
            return .failure(SluiceError(.extractorCrashed, "the extract worker died before \(what) (\(status))"))
        }
        var event = worker.output.next(deadline: job.deadline)
        if !greeted, case .line(let bytes) = event {
            // A new worker's first line is its hello; one from before hellos answers the request at once.
            let hello = ExtractWorkerProtocol.decodeHello(bytes)
            guard hello?.worker == ExtractWorkerProtocol.compatibility else {
                _ = worker.kill()
                process = nil
                return refuse(job, reported: hello)
            }
            greeted = true
            event = worker.output.next(deadline: job.deadline)
        }
        process = worker
        switch event {
        case .line(let bytes):
            guard let response = ExtractWorkerProtocol.decodeResponse(bytes),
                response.id == job.request.id
            else {
                _ = worker.kill()
                process = nil
                return .failure(
                    SluiceError(.extractorCrashed, "the extract worker answered \(what) with garbage; it was restarted")
                )
            }
            if let failure = response.failure {
                return .failure(SluiceError(.init(failure.code), failure.message))
            }
            return .success(response)
        case .timedOut:
            let status = worker.kill()
            process = nil
            return .failure(
                SluiceError(
                    .timeout,
                    "\(what) took longer than extract.timeout_seconds; its worker was killed (\(status)) and replaced"
                )
            )
        case .end, .failed, nil:
            let status = worker.kill()
            process = nil
            return .failure(
                SluiceError(
                    .extractorCrashed,
                    "the extract worker crashed during \(what) (\(status)); the run goes on with a new worker"
                )
            )
        }
    }

    /// The command's fallback, with the command's environment.
    private var fallbackCommand: ExtractWorkerPool.Command? {
        command.fallback.map { fallback in
            var program = ExtractWorkerPool.Command(executable: fallback.executable, arguments: fallback.arguments)
            program.environment = command.environment
            return program
        }
    }

    /// A worker from another build was killed before its answer was used: the job runs again on the
    /// fallback, once, or fails when there is none (or the fallback itself is of another build).
    private mutating func refuse(
        _ job: Job,
        reported hello: ExtractWorkerProtocol.Hello?
    ) -> Result<
        ExtractWorkerProtocol.Response, SluiceError
    > {
        let executable = processIsFallback ? command.fallback?.executable ?? command.executable : command.executable
        let reported = hello.map { "it reports \"\($0.worker)\"" } ?? "it sends no hello"
        let problem =
            "the extract worker \(executable) is from another build of Sluice (\(reported); this sluice is \"\(ExtractWorkerProtocol.compatibility)\")"
        guard !processIsFallback, let fallback = command.fallback else {
            return .failure(SluiceError(.extractionFailed, problem))
        }
        // Without the options JSON the pool appended.
        let instead = ([fallback.executable] + fallback.arguments.dropLast()).joined(separator: " ")
        state.fallBack(
            because:
                "\(problem): the workers run as `\(instead)` instead; install sluice-extract-worker from the same build as sluice"
        )
        return perform(job)
    }

    private static func describe(_ request: ExtractWorkerProtocol.Request) -> String {
        switch request.kind {
        case .pdfInfo: "opening the PDF (and its first pages)"
        case .pdfPages:
            if let first = request.first, let count = request.count, count > 1 {
                "PDF pages \(first + 1)–\(first + count)"
            } else {
                "PDF page \((request.first ?? 0) + 1)"
            }
        case .image: "OCR of the image"
        case .pdfPictures: "decoding the PDF's pictures"
        }
    }
}

/// A running `sluice extract-worker`: its pid and the two pipes.
struct WorkerProcess {
    let pid: pid_t
    let input: Int32
    var output: LineReader

    /// Starts the worker with standard input and output on pipes and standard error inherited. No other
    /// descriptor reaches it, close-on-exec or not (one action closes every descriptor from 3 up in the child,
    /// `PosixSpawnCloseFrom` in SluiceCore): a process embedding Sluice may hold unmarked ones, which a worker would keep
    /// open for the pool's lifetime.
    static func spawn(_ command: ExtractWorkerPool.Command) throws -> WorkerProcess {
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0 else {
            throw SluiceError(.extractionFailed, "pipe: \(String(cString: strerror(errno)))")
        }
        guard pipe(&fromChild) == 0 else {
            close(toChild[0])
            close(toChild[1])
            throw SluiceError(.extractionFailed, "pipe: \(String(cString: strerror(errno)))")
        }
        // Not inherited by other programs this process starts (the worker gets them through dup2).
        for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], STDOUT_FILENO)
        PosixSpawnCloseFrom.add(&actions, from: 3)

        let argv = ([command.executable] + command.arguments).map { strdup($0) } + [nil]
        let envp = command.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command.executable, &actions, nil, argv, envp)
        close(toChild[0])
        close(fromChild[1])
        guard status == 0 else {
            close(toChild[1])
            close(fromChild[0])
            throw SluiceError(
                .extractionFailed,
                "cannot start the extract worker \(command.executable): \(String(cString: strerror(status)))"
            )
        }
        return WorkerProcess(pid: pid, input: toChild[1], output: LineReader(fd: fromChild[0]))
    }

    /// The worker's environment: an allow-list of the parent's, plus settings that only take effect at
    /// process start. Workers parse untrusted PDFs and images, so they get none of the secrets the parent
    /// may hold (API keys, database passwords, whatever variables a pipeline names): only what the process,
    /// its C libraries and the test hooks read. `passing` names further variables the worker needs (the
    /// PDF password's, `extract.pdf.password_env`).
    /// - `OMP_THREAD_LIMIT=1`: libgomp (Tesseract) reads it at load; without it OCR costs 3–5× the CPU.
    /// - `OPENBLAS_NUM_THREADS=1`: the worker never calls BLAS, so OpenBLAS starts no thread pool.
    /// - `GLIBC_TUNABLES` with `glibc.malloc.tcache_count=1000`: poppler's text extraction spends a
    ///   quarter of its CPU in malloc and free of small objects; a deeper per-thread cache than glibc's
    ///   default 7 cut the CPU per page by 11% on Debian's manuals (peak RSS +6 MB). Tunables the user
    ///   set are kept, and theirs win.
    static func workerEnvironment(_ parent: [String: String], passing: [String] = []) -> [String: String] {
        var environment = parent.filter { name, _ in
            inheritedVariables.contains(name) || passing.contains(name)
                || inheritedPrefixes.contains { name.hasPrefix($0) }
        }
        environment["OMP_THREAD_LIMIT"] = "1"
        environment["OPENBLAS_NUM_THREADS"] = parent["OPENBLAS_NUM_THREADS"] ?? "1"
        let cache = "glibc.malloc.tcache_count=1000"
        if let tunables = parent["GLIBC_TUNABLES"], !tunables.isEmpty {
            if !tunables.contains("glibc.malloc.tcache_count=") {
                environment["GLIBC_TUNABLES"] = cache + ":" + tunables
            }
        } else {
            environment["GLIBC_TUNABLES"] = cache
        }
        return environment
    }

    /// What a worker inherits by name: the locale and time zone, where to find programs, libraries,
    /// temporary files, fonts (fontconfig, for poppler) and its caches, Tesseract's language data and its
    /// choice of SIMD kernel (`DOTPRODUCT`, read when libtesseract loads, as the `tesseract` CLI reads it), the
    /// thread and malloc settings above, and Swift's crash backtracer setting.
    static let inheritedVariables: Set<String> = [
        "PATH", "HOME", "TMPDIR", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH",
        "FONTCONFIG_FILE", "FONTCONFIG_PATH", "XDG_CACHE_HOME", "TESSDATA_PREFIX", "DOTPRODUCT",
        "OMP_THREAD_LIMIT", "OPENBLAS_NUM_THREADS", "GLIBC_TUNABLES", "SWIFT_BACKTRACE",
    ]

    /// What a worker inherits by prefix: locale categories, and the test hooks of debug builds.
    static let inheritedPrefixes = ["LC_", "SLUICE_DEBUG_"]

    /// Kills (SIGKILL) and reaps the worker; returns how it ended ("signal 11 (SIGSEGV)", "exit 1").
    func kill() -> String {
        Glibc.kill(pid, SIGKILL)
        let status = reap()
        close(input)
        close(output.fd)
        return status
    }

    /// Closes its input (the worker exits) and reaps it.
    func stop() {
        close(input)
        _ = reap()
        close(output.fd)
    }

    private func reap() -> String {
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, 0) } while result < 0 && errno == EINTR
        guard result == pid else { return "already reaped" }
        let signalNumber = status & 0x7F
        if signalNumber == 0 { return "exit \((status >> 8) & 0xFF)" }
        let name = strsignal(signalNumber).map { String(cString: $0) } ?? "?"
        return "signal \(signalNumber), \(name)"
    }
}
