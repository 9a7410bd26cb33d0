import Foundation
import SluiceCore

#if canImport(Glibc)
import Glibc
#endif

/// The worker side of ``ExtractWorkerPool``: the `sluice extract-worker` process.
///
/// It reads requests from standard input, one per line, runs them with the in-process extractors
/// (``PDFExtractor``, ``ImageExtractor``, and poppler's decoding of a PDF's pictures for captions) and writes
/// one response line each. Its own standard output is
/// kept for responses only: whatever C libraries print goes to standard error. It keeps the PDFs it
/// works on open (``OpenDocuments``; one Tesseract engine per process) and exits when its input closes or
/// its parent dies. It ignores SIGINT and SIGTERM, which a terminal or service manager sends to the whole
/// process group: the parent finishes the documents in flight first (SIGKILL still works).
package enum ExtractWorker {
    /// Serves requests until standard input closes; returns the exit status.
    package static func serve(options: ExtractWorkerProtocol.Options) -> RunExitCode {
        // Responses go to a private copy of stdout; fd 1 becomes stderr so stray prints cannot corrupt them.
        let output = dup(STDOUT_FILENO)
        guard output >= 0 else { return .internalError }
        _ = fcntl(output, F_SETFD, FD_CLOEXEC)  // not for helpers such as Swift's crash backtracer
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // Ctrl-C reaches the whole process group: the parent decides (it drains, then closes our input).
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        watchParent()
        recordStart()
        // The hello first: the pool reads it with the answer to its first request.
        if let hello = helloLine(), !writeAll(output, hello) { return .outputFailed }

        let engines = OCREnginePool(options: options.ocr)
        let pdf = PDFExtractor(pdf: options.pdf, engines: engines)
        let images = ImageExtractor(engines: engines)
        var open = OpenDocuments(capacity: options.openDocuments)
        var reader = LineReader(fd: STDIN_FILENO)

        while let line = reader.next(deadline: nil) {
            guard case .line(let bytes) = line else { break }
            guard let request = ExtractWorkerProtocol.decodeRequest(bytes) else {
                FileHandle.standardError.write(Data("sluice extract-worker: malformed request\n".utf8))
                return .malformedInput
            }
            let received = ContinuousClock.now
            debugHooks(request)
            if request.kind != .pdfPages { DebugPause.at("REOPEN", path: request.path) }
            var response = ExtractWorkerProtocol.Response(id: request.id)
            do {
                switch request.kind {
                case .pdfInfo, .pdfPages, .pdfPictures:
                    // Keyed by the file too: another file at the path is opened (and refused) anew.
                    let key = "\(request.path)\u{0}\(request.identity.map { "\($0.device):\($0.inode)" } ?? "")"
                    let document = try open.document(at: key) { _ in try pdf.open(file: request.openFile()) }
                    if request.kind == .pdfPictures {
                        response.pictures = try pictures(of: document, request: request)
                    } else if request.kind == .pdfInfo {
                        let info = PDFExtractor.info(of: document)
                        response.info = info
                        // The first pages come with the information: a short PDF takes one round trip,
                        // and a long one (or a scan) is split among the workers after this budget.
                        let count = min(request.count ?? 0, info.pageCount)
                        let until = request.budgetMilliseconds.map { received + .milliseconds($0) }
                        if count > 0 {
                            response.pages = try firstPages(
                                of: document,
                                count: count,
                                until: until,
                                with: pdf,
                                maxTextBytes: request.maxTextBytes ?? .max
                            )
                        }
                    } else {
                        let first = request.first ?? 0
                        let count = request.count ?? 0
                        var budget = TextBudget(limit: request.maxTextBytes ?? .max)
                        response.pages = try pdf.pages(of: document, range: first..<(first + count), budget: &budget)
                    }
                case .image:
                    let bytes = try request.openFile().readAll()
                    let result = try images.recognize(bytes, format: FormatSniffer.sniff(bytes))
                    response.image = .init(text: result.text, confidence: result.confidence)
                }
            } catch {
                let sluice = SluiceError.wrap(error, as: .extractionFailed)
                response.failure = .init(code: sluice.code.rawValue, message: sluice.message)
            }
            guard let encoded = try? ExtractWorkerProtocol.encodeLine(response), writeAll(output, encoded) else {
                return .outputFailed
            }
        }
        return .success
    }

    /// Pages `0..<count`, one at a time, stopping after the first page that ends past `until`; their
    /// text held to `maxTextBytes`.
    static func firstPages(
        of document: PDFDocument,
        count: Int,
        until: ContinuousClock.Instant?,
        with pdf: PDFExtractor,
        maxTextBytes: Int = .max
    ) throws -> [PDFPage] {
        var budget = TextBudget(limit: maxTextBytes)
        guard let until else { return try pdf.pages(of: document, range: 0..<count, budget: &budget) }
        var pages: [PDFPage] = []
        for index in 0..<count {
            pages += try pdf.pages(of: document, range: index..<(index + 1), budget: &budget)
            if ContinuousClock.now >= until { break }
        }
        return pages
    }

    /// A worker whose parent died (even by kill -9) exits, rather than run on as an orphan.
    private static func watchParent() {
        let parent = getppid()
        let thread = Thread {
            while true {
                sleep(1)
                if getppid() != parent { _exit(0) }
            }
        }
        thread.stackSize = 64 << 10
        thread.start()
    }

    /// The hello line. Debug builds take a test hook, `SLUICE_DEBUG_WORKER_HELLO`: `none` writes no hello
    /// (a worker from before hellos), any other value is reported instead of this build's compatibility.
    private static func helloLine() -> [UInt8]? {
        var compatibility = ExtractWorkerProtocol.compatibility
        #if DEBUG
        if let hook = ProcessInfo.processInfo.environment["SLUICE_DEBUG_WORKER_HELLO"], !hook.isEmpty {
            if hook == "none" { return nil }
            compatibility = hook
        }
        #endif
        return try? ExtractWorkerProtocol.encodeLine(ExtractWorkerProtocol.Hello(worker: compatibility))
    }

    /// A test hook of debug builds: with `SLUICE_DEBUG_WORKER_TRACE` naming a folder, each worker writes a file
    /// there named by its process id and holding its command line's first two words, so a test learns which
    /// program served as the workers without watching the process table (a short-lived worker slips between
    /// two looks at it).
    private static func recordStart() {
        #if DEBUG
        guard let folder = ProcessInfo.processInfo.environment["SLUICE_DEBUG_WORKER_TRACE"], !folder.isEmpty else {
            return
        }
        let data = FileManager.default.contents(atPath: "/proc/self/cmdline") ?? Data()
        let words = data.split(separator: 0).prefix(2).map { String(decoding: $0, as: UTF8.self) }
        try? Data(words.joined(separator: " ").utf8).write(
            to: URL(fileURLWithPath: folder).appendingPathComponent(String(getpid()))
        )
        #endif
    }

    /// Test hooks, compiled into debug builds only: a worker that crashes (SIGSEGV) or hangs on files
    /// whose path contains the value of `SLUICE_DEBUG_WORKER_CRASH` / `SLUICE_DEBUG_WORKER_HANG`, to
    /// prove that a crash or hang in C code costs one document, not the run.
    private static func debugHooks(_ request: ExtractWorkerProtocol.Request) {
        #if DEBUG
        let environment = ProcessInfo.processInfo.environment
        if let marker = environment["SLUICE_DEBUG_WORKER_CRASH"], !marker.isEmpty, request.path.contains(marker) {
            // A real invalid write, as a bug in C code makes: raise(SIGSEGV) is not enough, because Swift's
            // crash backtracer handles a raised signal and returns to the caller.
            UnsafeMutablePointer<Int>(bitPattern: 0x10)!.pointee = 0x4BAD
        }
        if let marker = environment["SLUICE_DEBUG_WORKER_HANG"], !marker.isEmpty, request.path.contains(marker) {
            while true { sleep(60) }
        }
        #endif
    }
}

/// Writes all of `bytes` to `fd`, retrying on EINTR; false when the other end is gone.
func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    var written = 0
    while written < bytes.count {
        let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        written += n
    }
    return true
}

/// Reads newline-terminated lines from a file descriptor, optionally with a deadline (poll).
package struct LineReader {
    package enum Event {
        case line([UInt8])
        case end, timedOut
        case failed(Int32)
    }

    let fd: Int32
    private var buffer: [UInt8] = []
    private var scanned = 0

    package init(fd: Int32) { self.fd = fd }

    package mutating func next(deadline: ContinuousClock.Instant?) -> Event? {
        while true {
            if let newline = buffer[scanned...].firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeSubrange(...newline)
                scanned = 0
                return .line(line)
            }
            scanned = buffer.count
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { return .timedOut }
                let milliseconds = Int32(
                    clamping: remaining.components.seconds * 1000 + remaining.components.attoseconds
                        / 1_000_000_000_000_000 + 1
                )
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, milliseconds)
                if ready < 0 {
                    if errno == EINTR { continue }
                    return .failed(errno)
                }
                if ready == 0 { continue }  // re-check the deadline
            }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return .failed(errno)
            }
            if n == 0 { return .end }
            buffer += chunk[..<n]
        }
    }
}
