import ArgumentParser
import Foundation
import SluiceCore
import SluiceExtract

#if canImport(Glibc)
import Glibc
#endif

/// Side by side, in one run, on the same files: Sluice's PDF extraction (worker processes, as `sluice
/// run` does it, and in process) against `pdftotext` over the files with `xargs -P <cores>`; and OCR
/// per page against the `tesseract` CLI the same way. Wall and CPU seconds (this process and every
/// child), medians of `--repeats` alternating runs.
struct ExtractBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extract",
        abstract: "PDF text extraction vs pdftotext, and OCR vs the tesseract CLI (pages/s, CPU s/page)."
    )

    @Option(
        help:
            "The sluice binary (its extract-worker subcommand, or sluice-extract-worker beside it); default: next to this benchmark."
    ) var sluice: String?
    @Option(help: "A folder of PDFs; default: Debian's PDF manuals from /usr/share/doc plus samples/pdf.") var pdfs:
        String?
    @Option(parsing: .upToNextOption, help: "Images to OCR.") var images = [
        "samples/images/xz-faq-page.png", "samples/images/xz-faq-page.jpg", "samples/images/xz-faq-page.tiff",
    ]
    @Option(help: "Repetitions (medians are printed).") var repeats = 3
    @Option(help: "Parallel workers for both sides; default: the core count.") var parallelism = ProcessInfo.processInfo
        .activeProcessorCount
    @Option(
        help:
            "Also extract one PDF of about this many pages (Debian's valgrind manual concatenated by qpdf); 0 to skip."
    ) var largePages = 2000
    @Option(
        help:
            "Also compare on a bulk corpus: every text PDF in /usr/share/doc and samples/pdf, this many copies under other names (not with --pdfs); 0 to skip."
    ) var bulkCopies = 4
    @Flag(help: "Skip the OCR comparison.") var skipOCR = false

    struct Measure {
        var wall: Double
        var cpu: Double
    }

    func run() throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-extract-bench-\(getpid())")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        let worker =
            sluice
            ?? URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("sluice").path
        guard FileManager.default.isExecutableFile(atPath: worker) else {
            throw ValidationError("no sluice binary at \(worker) (build it, or pass --sluice)")
        }
        print(
            "worker processes: \(([Self.workerCommand(sluice: worker).executable] + Self.workerCommand(sluice: worker).arguments).joined(separator: " "))\n"
        )
        let files = try pdfs.map { try Self.pdfFiles(in: URL(fileURLWithPath: $0)) } ?? Self.defaultPDFs(into: work)
        try comparePDF(files: files, worker: worker, in: work, title: "PDF")
        if pdfs == nil && bulkCopies > 0 {
            try comparePDF(
                files: try Self.bulkPDFs(copies: bulkCopies, into: work),
                worker: worker,
                in: work,
                title: "\nBulk PDF (every text PDF in /usr/share/doc and samples/pdf, \(bulkCopies) copies)"
            )
        }
        if largePages > 0 { try measureLargeDocument(worker: worker, in: work) }
        if !skipOCR { try measureOCR(worker: worker, in: work) }
    }

    // MARK: PDF

    /// Workers, in process and pdftotext over `files`, alternating, `repeats` times; prints the table.
    private func comparePDF(files: [String], worker: String, in work: URL, title: String) throws {
        var pages = 0
        for file in files { pages += try PDFDocument(path: file).pageCount }
        print(
            "\(title): \(files.count) files, \(pages) pages, \(parallelism) workers on \(ProcessInfo.processInfo.activeProcessorCount) cores; medians of \(repeats)\n"
        )

        var workerRuns: [Measure] = []
        var inProcessRuns: [Measure] = []
        var pdftotextRuns: [Measure] = []
        var workerPeakRSS = 0.0
        for attempt in 1...repeats {
            let (isolated, peak) = try measureWorkers(kind: .pdf, files: files, worker: worker)
            if attempt == 1 { workerPeakRSS = peak }
            workerRuns.append(isolated)
            inProcessRuns.append(try measureInProcess(files: files))
            pdftotextRuns.append(try measureXargs(["pdftotext", "{}", "/dev/null"], files: files, in: work))
            FileHandle.standardError.write(
                Data(
                    "run \(attempt): workers \(f(isolated.wall, 2)) s, in process \(f(inProcessRuns.last!.wall, 2)) s, pdftotext \(f(pdftotextRuns.last!.wall, 2)) s\n"
                        .utf8
                )
            )
        }
        print("PDF text | pages/s | CPU s/page | wall s | CPU s")
        print("---|---|---|---|---")
        for (name, runs) in [
            ("sluice (worker processes)", workerRuns), ("sluice (in process)", inProcessRuns),
            ("pdftotext, xargs -P \(parallelism)", pdftotextRuns),
        ] {
            let wall = median(runs.map(\.wall))
            let cpu = median(runs.map(\.cpu))
            print(
                "\(name) | \(f(Double(pages) / wall, 0)) | \(f(cpu / Double(pages) * 1000, 2)) ms | \(f(wall, 2)) | \(f(cpu, 2))"
            )
        }
        print("\nlargest worker's peak RSS so far (first run): \(f(workerPeakRSS, 0)) MB")
    }

    private func measureWorkers(
        kind: IsolatedExtractor.Kind,
        files: [String],
        worker: String
    ) throws -> (Measure, peakWorkerMB: Double) {
        var configuration = PipelineConfiguration.Extract()
        configuration.ocr.mode = kind == .pdf ? .never : .auto  // pdftotext does not OCR
        configuration.timeoutSeconds = 3600
        let inputs = try files.map {
            ExtractionInput(
                key: $0,
                fileURL: URL(fileURLWithPath: $0),
                bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0)))
            )
        }
        let start = Self.usage()
        let pool = ExtractWorkerPool(
            command: Self.workerCommand(sluice: worker),
            options: .init(ocr: configuration.ocr, pdf: configuration.pdf),
            size: parallelism
        )
        let extractor = IsolatedExtractor(kind: kind, configuration: configuration, pool: pool)
        try Self.concurrently(inputs.count, width: parallelism) { _ = try extractor.extract(inputs[$0]) }
        pool.shutdown()
        pool.waitUntilStopped()
        let end = Self.usage()
        return (Measure(wall: end.wall - start.wall, cpu: end.cpu - start.cpu), end.childPeakMB)
    }

    private func measureInProcess(files: [String]) throws -> Measure {
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = .never
        let extractor = PDFExtractor(pdf: .init(), engines: OCREnginePool(options: ocr))
        let inputs = try files.map {
            ExtractionInput(
                key: $0,
                fileURL: URL(fileURLWithPath: $0),
                bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: $0)))
            )
        }
        let start = Self.usage()
        try Self.concurrently(inputs.count, width: parallelism) { _ = try extractor.extract(inputs[$0]) }
        let end = Self.usage()
        return Measure(wall: end.wall - start.wall, cpu: end.cpu - start.cpu)
    }

    /// One long document, which the workers split between them and `pdftotext` reads in one process:
    /// pages/s and CPU per page (medians of `repeats`), and the largest worker's peak RSS (pages are loaded
    /// one at a time).
    private func measureLargeDocument(worker: String, in work: URL) throws {
        let manual = work.appendingPathComponent("valgrind_manual.pdf")
        guard FileManager.default.fileExists(atPath: manual.path),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/qpdf")
        else {
            print("\n(large document skipped: needs qpdf and Debian's valgrind manual)")
            return
        }
        let copies = max(1, (largePages + 396) / 397)
        let large = work.appendingPathComponent("large.pdf")
        try Self.spawnAndWait(
            ["/usr/bin/qpdf", "--empty", "--pages"] + Array(repeating: manual.path, count: copies) + ["--", large.path]
        )
        let pages = try PDFDocument(path: large.path).pageCount
        var workerRuns: [Measure] = []
        var pdftotextRuns: [Measure] = []
        for _ in 1...repeats {
            workerRuns.append(try measureWorkers(kind: .pdf, files: [large.path], worker: worker).0)
            pdftotextRuns.append(try measureXargs(["pdftotext", "{}", "/dev/null"], files: [large.path], in: work))
        }
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        let parentPeak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.map(String.init) ?? "?"
        print(
            "\none \(pages)-page PDF (\(f(Double(try Data(contentsOf: large).count) / 1_048_576, 1)) MB) | pages/s | CPU s/page | wall s | CPU s"
        )
        print("---|---|---|---|---")
        for (name, runs) in [
            ("sluice (\(parallelism) worker processes)", workerRuns),
            ("pdftotext (one process: xargs has one file)", pdftotextRuns),
        ] {
            let wall = median(runs.map(\.wall))
            let cpu = median(runs.map(\.cpu))
            print(
                "\(name) | \(f(Double(pages) / wall, 0)) | \(f(cpu / Double(pages) * 1000, 2)) ms | \(f(wall, 2)) | \(f(cpu, 2))"
            )
        }
        print(
            "\npeak RSS of the largest worker so far \(f(Self.usage().childPeakMB, 0)) MB; this process \(parentPeak.replacingOccurrences(of: "VmHWM:", with: "").trimmingCharacters(in: .whitespaces))"
        )
    }

    // MARK: OCR

    private func measureOCR(worker: String, in work: URL) throws {
        let files = images.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        var sluiceRuns: [Measure] = []
        var cliRuns: [Measure] = []
        var openMPRuns: [Measure] = []
        for attempt in 1...repeats {
            sluiceRuns.append(try measureWorkers(kind: .image, files: files, worker: worker).0)
            cliRuns.append(
                try measureXargs(
                    ["tesseract", "{}", "-"],
                    files: files,
                    in: work,
                    environment: ["OMP_THREAD_LIMIT": "1"]
                )
            )
            // What a shell user gets by default: libgomp's own thread count (OMP_THREAD_LIMIT unset).
            openMPRuns.append(
                try measureXargs(
                    ["tesseract", "{}", "-"],
                    files: files,
                    in: work,
                    environment: ["OMP_THREAD_LIMIT": nil]
                )
            )
            FileHandle.standardError.write(
                Data(
                    "OCR run \(attempt): sluice \(f(sluiceRuns.last!.wall, 2)) s, tesseract \(f(cliRuns.last!.wall, 2)) s, tesseract with OpenMP threads \(f(openMPRuns.last!.wall, 2)) s\n"
                        .utf8
                )
            )
        }
        print("\nOCR, \(files.count) pages (300 dpi) | wall s/page | CPU s/page | wall s | CPU s")
        print("---|---|---|---|---")
        for (name, runs) in [
            ("sluice (worker processes)", sluiceRuns),
            ("tesseract CLI, xargs -P \(parallelism), OMP_THREAD_LIMIT=1", cliRuns),
            ("tesseract CLI, xargs -P \(parallelism), OMP_THREAD_LIMIT unset", openMPRuns),
        ] {
            let wall = median(runs.map(\.wall))
            let cpu = median(runs.map(\.cpu))
            print(
                "\(name) | \(f(wall / Double(files.count), 2)) | \(f(cpu / Double(files.count), 2)) | \(f(wall, 2)) | \(f(cpu, 2))"
            )
        }
    }

    // MARK: Helpers

    /// The workers as `sluice run` starts them: `sluice-extract-worker` beside the `sluice` binary when it is
    /// there, else `sluice extract-worker`.
    static func workerCommand(sluice: String) -> ExtractWorkerPool.Command {
        let lean = URL(fileURLWithPath: sluice).deletingLastPathComponent().appendingPathComponent(
            "sluice-extract-worker"
        )
        if FileManager.default.isExecutableFile(atPath: lean.path) {
            return .init(executable: lean.path, arguments: [])
        }
        return .init(executable: sluice, arguments: ["extract-worker"])
    }

    /// `xargs -P <parallelism> -I{} COMMAND` over the files, output discarded; wall and CPU of the tree.
    private func measureXargs(
        _ command: [String],
        files: [String],
        in work: URL,
        environment: [String: String?] = [:]
    ) throws -> Measure {
        let list = work.appendingPathComponent("files.txt")
        try files.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)
        let start = Self.usage()
        try Self.spawnAndWait(
            ["/usr/bin/xargs", "-a", list.path, "-d", "\n", "-P", String(parallelism), "-I{}"] + command,
            environment: environment
        )
        let end = Self.usage()
        return Measure(wall: end.wall - start.wall, cpu: end.cpu - start.cpu)
    }

    /// Runs a program with standard output and error discarded, `environment` added to (nil: removed
    /// from) this process's; throws unless it exits 0.
    static func spawnAndWait(_ arguments: [String], environment: [String: String?] = [:]) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, arguments[0], &actions, nil, argv, envp)
        guard spawned == 0 else {
            throw ValidationError("cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard status == 0 else { throw ValidationError("\(arguments[0]) failed (status \(status))") }
    }

    /// Runs `body(0..<count)` on `width` dedicated threads.
    static func concurrently(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        let next = NSLock()
        nonisolated(unsafe) var index = 0
        nonisolated(unsafe) var failure: (any Error)?
        let group = DispatchGroup()
        for _ in 0..<min(width, count) {
            group.enter()
            Thread {
                defer { group.leave() }
                while true {
                    let item: Int? = next.withLock {
                        guard failure == nil, index < count else { return nil }
                        index += 1
                        return index - 1
                    }
                    guard let item else { return }
                    do { try body(item) } catch { next.withLock { failure = failure ?? error } }
                }
            }.start()
        }
        group.wait()
        if let failure { throw failure }
    }

    /// Wall clock and CPU seconds of this process plus its reaped children; the children's peak RSS.
    static func usage() -> (wall: Double, cpu: Double, childPeakMB: Double) {
        var me = rusage()
        var children = rusage()
        getrusage(RUSAGE_SELF.rawValue, &me)
        getrusage(RUSAGE_CHILDREN.rawValue, &children)
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        let cpu = seconds(me.ru_utime) + seconds(me.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return (Double(now.tv_sec) + Double(now.tv_nsec) / 1e9, cpu, Double(children.ru_maxrss) / 1024)
    }

    static func pdfFiles(in folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".pdf") }.sorted().map {
            folder.appendingPathComponent($0).path
        }
    }

    /// Every PDF with a text layer under /usr/share/doc (decompressed) and in samples/pdf, `copies` times
    /// under other names, in `work`/bulk: a corpus where a worker's start is a small part of the work.
    static func bulkPDFs(copies: Int, into work: URL) throws -> [String] {
        let folder = work.appendingPathComponent("bulk")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var sources: [String] = []
        if let walk = FileManager.default.enumerator(atPath: "/usr/share/doc") {
            for case let path as String in walk where path.hasSuffix(".pdf") || path.hasSuffix(".pdf.gz") {
                sources.append("/usr/share/doc/" + path)
            }
        }
        // run from the package root to include them
        sources += (try? pdfFiles(in: URL(fileURLWithPath: "samples/pdf"))) ?? []
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = .never
        let check = PDFExtractor(pdf: .init(), engines: OCREnginePool(options: ocr))
        var originals: [String] = []
        for source in sources.sorted() {
            let url = URL(fileURLWithPath: source)
            var name = url.deletingLastPathComponent().lastPathComponent + "-" + url.lastPathComponent
            if name.hasSuffix(".gz") { name.removeLast(3) }
            let destination = folder.appendingPathComponent(name)
            guard !FileManager.default.fileExists(atPath: destination.path) else { continue }
            if source.hasSuffix(".gz") {
                try Self.spawnAndWait(["/bin/sh", "-c", "gzip -dc '\(source)' > '\(destination.path)'"])
            } else {
                try FileManager.default.copyItem(atPath: source, toPath: destination.path)
            }
            // Scans and image-only PDFs are left out: pdftotext does not OCR.
            let input = ExtractionInput(
                key: name,
                fileURL: destination,
                bytes: [UInt8](try Data(contentsOf: destination))
            )
            if (try? check.extract(input)) != nil {
                originals.append(destination.path)
            } else {
                try FileManager.default.removeItem(at: destination)
            }
        }
        guard !originals.isEmpty else {
            throw ValidationError("no PDFs with a text layer in /usr/share/doc or samples/pdf")
        }
        var out = originals
        for copy in 1..<max(1, copies) {
            for original in originals {
                let url = URL(fileURLWithPath: original)
                let destination = folder.appendingPathComponent("copy\(copy)-" + url.lastPathComponent)
                try FileManager.default.copyItem(atPath: original, toPath: destination.path)
                out.append(destination.path)
            }
        }
        return out
    }

    /// Debian's PDF manuals (decompressed) and the text-layer PDFs of samples/pdf, copied into `work`.
    static func defaultPDFs(into work: URL) throws -> [String] {
        let debian = [
            "/usr/share/doc/valgrind/valgrind_manual.pdf.gz", "/usr/share/doc/nettle-dev/nettle.pdf.gz",
            "/usr/share/doc/bzip2/manual.pdf.gz", "/usr/share/doc/libtasn1-doc/libtasn1.pdf",
            "/usr/share/doc/zlib1g-dev/crc-doc.1.0.pdf.gz",
        ]
        let samples = ["fontconfig-user.pdf", "shared-mime-info-spec.pdf", "xz-utils-faq.pdf", "zlib-two-column.pdf"]
            .map { "samples/pdf/\($0)" }
        var out: [String] = []
        for source in debian + samples where FileManager.default.fileExists(atPath: source) {
            var name = URL(fileURLWithPath: source).lastPathComponent
            if name.hasSuffix(".gz") { name.removeLast(3) }
            let destination = work.appendingPathComponent(name)
            if source.hasSuffix(".gz") {
                try Self.spawnAndWait(["/bin/sh", "-c", "gzip -dc '\(source)' > '\(destination.path)'"])
            } else {
                try FileManager.default.copyItem(atPath: source, toPath: destination.path)
            }
            out.append(destination.path)
        }
        guard !out.isEmpty else { throw ValidationError("no PDFs found; pass --pdfs FOLDER") }
        return out
    }
}
