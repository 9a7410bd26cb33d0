import Foundation
import SluiceCore
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// PDFs, scans and images through the `sluice` binary: worker processes, what reaches the stored
/// records, bad input failing alone, crash and hang isolation, and the OpenMP environment.
@Suite(.serialized)
struct ExtractionCLITests {
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    /// Copies samples (relative paths) into the corpus, keeping their folders.
    static func copySamples(_ paths: [String], into ws: Workspace) throws {
        for path in paths {
            let destination = ws.corpus.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(),
                withIntermediateDirectories: true
            )
            try FileManager.default.copyItem(at: samples.appendingPathComponent(path), to: destination)
        }
    }

    static let allFormats = ["--set", "source.include=[\"**/*\"]", "--set", "extract.parallelism=2"]

    @Test(
        "PDFs, scans and images: page numbers, title, author and OCR confidence reach the stored records; every bad input fails alone with its reason"
    )
    func formatsAndBadInputEndToEnd() async throws {
        let ws = try Workspace("extract")
        defer { ws.cleanUp() }
        try Self.copySamples(
            [
                "pdf/xz-utils-faq.pdf", "pdf/zlib-two-column.pdf", "pdf/xz-faq-scanned.pdf",
                "pdf/mixed-text-and-scan.pdf", "pdf/pages-without-scans.pdf",
                "images/xz-faq-page.png", "images/xz-faq-page.jpg", "images/xz-faq-page.tiff", "text/zlib-faq.txt",
                "bad/zero-byte.txt", "bad/invalid-utf8.txt", "bad/binary.txt", "bad/encrypted.pdf", "bad/truncated.pdf",
                "bad/png-named.pdf",
            ],
            into: ws
        )
        // A 50 MB single-line text, over extract.max_file_mb (40 here): refused before it is read.
        let huge = ws.corpus.appendingPathComponent("bad/huge-single-line.txt")
        _ = FileManager.default.createFile(atPath: huge.path, contents: nil)
        let handle = try FileHandle(forWritingTo: huge)
        let block = Data(String(repeating: "word ", count: 1 << 18).utf8)
        for _ in 0..<40 { handle.write(block) }
        try handle.close()
        // Links: one outside the root (refused), one looping back to the root (not walked twice), one to a
        // PDF inside the root (indexed under its own key).
        try FileManager.default.createSymbolicLink(
            atPath: ws.corpus.appendingPathComponent("outside.txt").path,
            withDestinationPath: "/etc/hostname"
        )
        try FileManager.default.createSymbolicLink(
            atPath: ws.corpus.appendingPathComponent("loop").path,
            withDestinationPath: "."
        )
        try FileManager.default.createSymbolicLink(
            atPath: ws.corpus.appendingPathComponent("linked.pdf").path,
            withDestinationPath: "pdf/xz-utils-faq.pdf"
        )
        // Unreadable (only meaningful when not root: root reads anything).
        let unreadable = ws.corpus.appendingPathComponent("bad/unreadable.txt")
        try Data("secret\n".utf8).write(to: unreadable)
        chmod(unreadable.path, 0)
        let asRoot = getuid() == 0

        let main = ws.target("main")
        let settings =
            Self.allFormats + [
                "--set", "extract.max_file_mb=40", "--set", "source.follow_symlinks=true",
                "--set", "extract.pdf.password_env=SLUICE_TEST_PDF_PASSWORD", "--set", "extract.pdf.strip_headers=true",
            ]
        let result = try await ws.sluice(
            ws.runArguments(main, settings),
            environment: ["SLUICE_TEST_PDF_PASSWORD": nil],
            timeout: .seconds(240)
        )
        #expect(result.exitCode == 2, "\(result)")

        let status = try await ws.status(main)
        let failures = status.failures
        var expectedFailures: [String: [String]] = [
            "bad/zero-byte.txt": ["zero-byte"],
            "bad/invalid-utf8.txt": ["invalid UTF-8"],
            "bad/binary.txt": ["binary data"],
            "bad/encrypted.pdf": ["encrypted", "SLUICE_TEST_PDF_PASSWORD", "not set"],
            "bad/truncated.pdf": ["not a readable PDF"],
            "bad/huge-single-line.txt": ["too-large", "max_file_mb"],
            "outside.txt": ["outside the source root"],
        ]
        if !asRoot { expectedFailures["bad/unreadable.txt"] = ["permission denied"] }
        #expect(
            Set(failures.keys) == Set(expectedFailures.keys).union(asRoot ? [] : ["bad/unreadable.txt"]),
            "\(status.text)"
        )
        for (key, words) in expectedFailures {
            for word in words {
                #expect(failures[key]?.contains(word) == true, "\(key): \(failures[key] ?? "not failed")")
            }
        }

        let records = try Export.records(try await ws.export(main))
        let byDocument = Dictionary(grouping: records, by: \.documentKey)
        #expect(byDocument.keys.contains { $0.hasPrefix("loop/") } == false, "a looping link is not walked")
        // Page numbers, title and author on every chunk of a PDF.
        let faq = byDocument["pdf/xz-utils-faq.pdf"] ?? []
        #expect(Set(faq.compactMap { $0.metadata["page"] }) == [1, 2, 3, 4])
        #expect(
            faq.allSatisfy {
                $0.metadata["title"] == "XZ Utils FAQ" && $0.metadata["author"] == "Lasse Collin"
                    && $0.metadata["format"] == "pdf"
            }
        )
        #expect((byDocument["linked.pdf"] ?? []).count == faq.count)
        // The scanned PDF and the images are OCR'd, with their confidence.
        for key in [
            "pdf/xz-faq-scanned.pdf", "images/xz-faq-page.png", "images/xz-faq-page.jpg", "images/xz-faq-page.tiff",
            "bad/png-named.pdf",
        ] {
            let chunks = byDocument[key] ?? []
            #expect(!chunks.isEmpty, "\(key) not indexed")
            #expect(
                chunks.allSatisfy { $0.metadata["ocr_confidence"]?.number ?? 0 > 70 },
                "\(key): \(chunks.map(\.metadata))"
            )
            #expect(chunks.map(\.text).joined(separator: " ").contains("designed by Igor Pavlov"), "\(key)")
        }
        #expect(byDocument["bad/png-named.pdf"]?.first?.metadata["format"] == "png")
        let mixed = byDocument["pdf/mixed-text-and-scan.pdf"] ?? []
        #expect(Set(mixed.compactMap { $0.metadata["page"] }) == [1, 2])
        #expect(mixed.first?.metadata["ocr_pages"] == 1)
        // Through the workers too, pages without an image to read are not OCR'd, and say so; the run's line
        // in `status` adds up the pages (the scans read, the blank scan, the skipped pages).
        let drawings = byDocument["pdf/pages-without-scans.pdf"] ?? []
        #expect(!drawings.isEmpty)
        #expect(drawings.allSatisfy { $0.metadata["ocr_skipped_pages"] == 3 && $0.metadata["ocr_empty_pages"] == 1 })
        #expect(
            status.text.contains("OCR: 2 pages read, 1 read as nothing, 3 skipped (no image to read)"),
            "\(status.text)"
        )

        // With the password in the configured variable the encrypted PDF opens on the retry.
        let retry = try await ws.sluice(
            ws.runArguments(main, settings + ["--retry-failed"]),
            environment: ["SLUICE_TEST_PDF_PASSWORD": "sluice"],
            timeout: .seconds(120)
        )
        #expect(retry.exitCode == 2)
        let after = try await ws.status(main).failures
        #expect(after["bad/encrypted.pdf"] == nil, "\(after)")
        let decrypted = try Export.records(try await ws.export(main)).filter { $0.documentKey == "bad/encrypted.pdf" }
        #expect(!decrypted.isEmpty && decrypted.allSatisfy { $0.metadata["title"] == "XZ Utils FAQ" })
        for record in decrypted {
            #expect(!record.metadata.values.contains("sluice"), "the password must not be stored")
        }
        #expect(!(try await ws.sluice(["status", ws.pipeline.path] + main.arguments)).stdout.contains("sluice-owner"))
    }

    @Test("a worker that crashes (SIGSEGV) fails only its document; a new worker takes the next ones")
    func workerCrashFailsOneDocument() async throws {
        let ws = try Workspace("crash")
        defer { ws.cleanUp() }
        try Self.copySamples(
            ["pdf/xz-utils-faq.pdf", "pdf/zlib-two-column.pdf", "pdf/fontconfig-user.pdf", "images/xz-faq-page.png"],
            into: ws
        )
        let main = ws.target("main")
        let result = try await ws.sluice(
            ws.runArguments(main, Self.allFormats + ["--set", "extract.parallelism=1"]),
            environment: ["SLUICE_DEBUG_WORKER_CRASH": "zlib-two-column"],
            timeout: .seconds(120)
        )
        #expect(result.exitCode == 2, "\(result)")
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": 3, "failed": 1], "\(status.text)")
        let reason = status.failures["pdf/zlib-two-column.pdf"] ?? ""
        #expect(reason.contains("extractor-crashed") && reason.contains("signal 11"), "\(reason)")
    }

    @Test(
        "a hung worker is killed at extract.timeout_seconds and replaced; sluice and its workers run with OMP_THREAD_LIMIT=1, the workers without the parent's secrets"
    )
    func hungWorkerIsKilledAtTheDeadline() async throws {
        let ws = try Workspace("hang")
        defer { ws.cleanUp() }
        try Self.copySamples(["pdf/fontconfig-user.pdf", "pdf/xz-utils-faq.pdf", "pdf/zlib-two-column.pdf"], into: ws)
        let main = ws.target("main")
        // The deadline applies to every document, so the healthy ones must be far from it however loaded the
        // machine is: two small text-layer PDFs (tens of milliseconds of CPU each), read after the hung one
        // (key order), so the worker that replaces the killed one extracts them. It once was 4 s with an OCR'd
        // image among them, and later 30 s: the image's OCR (about a CPU-second) still passed 30 s at a load
        // average of 20–60.
        let process = try ws.start(
            ws.runArguments(
                main,
                Self.allFormats + ["--set", "extract.parallelism=1", "--set", "extract.timeout_seconds=30"]
            ),
            environment: [
                "SLUICE_DEBUG_WORKER_HANG": "fontconfig", "OMP_THREAD_LIMIT": nil,
                // Secrets of the parent, which the processes that parse untrusted files must not inherit.
                "OPENAI_API_KEY": "sk-test-not-for-workers", "PGPASSWORD": "pg-test-not-for-workers",
                "SLUICE_TEST_PIPELINE_SECRET": "named-by-a-pipeline",
            ]
        )

        // While it runs: its workers have the variable (the parent sets it in its own environment before
        // libtesseract and libgomp are loaded, which /proc does not show: `openmp-limit` below checks it).
        var workers: [Int32] = []
        let started = ContinuousClock.now
        while workers.isEmpty && started.duration(to: .now) < .seconds(30) {
            try await Task.sleep(for: .milliseconds(100))
            workers = Self.children(of: process.pid).filter { Self.commandLine($0).contains("extract-worker") }
        }
        #expect(!workers.isEmpty, "no extract-worker child seen")
        // The lean worker executable, built beside `sluice`, is the one started.
        #expect(workers.allSatisfy { Self.commandLine($0).contains("sluice-extract-worker") })
        for worker in workers {
            let environment = Self.environment(of: worker)
            #expect(environment["OMP_THREAD_LIMIT"] == "1")
            #expect(environment["OPENBLAS_NUM_THREADS"] == "1")
            #expect(environment["GLIBC_TUNABLES"]?.contains("glibc.malloc.tcache_count=1000") == true)
            #expect(environment["SLUICE_DEBUG_WORKER_HANG"] == "fontconfig", "the test hooks reach the workers")
            for secret in ["OPENAI_API_KEY", "PGPASSWORD", "SLUICE_TEST_PIPELINE_SECRET"] {
                #expect(environment[secret] == nil, "worker \(worker) inherited \(secret)")
            }
        }
        #expect(
            Self.environment(of: process.pid)["OPENAI_API_KEY"] == "sk-test-not-for-workers",
            "the parent keeps its own"
        )

        let result = try await process.wait(timeout: .seconds(300))
        #expect(result.exitCode == 2, "\(result)")
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": 2, "failed": 1], "\(status.text)")
        #expect(status.failures["pdf/fontconfig-user.pdf"]?.contains("timeout") == true, "\(status.failures)")
        for worker in workers { #expect(kill(worker, 0) != 0, "worker \(worker) outlived the run") }
    }

    @Test("extract.isolate: false runs the same PDF and OCR extraction in process")
    func inProcessExtraction() async throws {
        let ws = try Workspace("inprocess")
        defer { ws.cleanUp() }
        try Self.copySamples(["pdf/xz-utils-faq.pdf", "pdf/xz-faq-scanned.pdf", "images/xz-faq-page.jpg"], into: ws)
        let main = ws.target("main")
        let trace = ws.file("worker-trace")
        try FileManager.default.createDirectory(at: trace, withIntermediateDirectories: true)
        let result = try await ws.start(
            ws.runArguments(main, Self.allFormats + ["--set", "extract.isolate=false"]),
            environment: ["SLUICE_DEBUG_WORKER_TRACE": trace.path]
        ).wait(timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        #expect(Self.workersStarted(trace).isEmpty, "no worker process when isolation is off")
        let records = try Export.records(try await ws.export(main))
        #expect(
            Set(records.filter { $0.documentKey == "pdf/xz-utils-faq.pdf" }.compactMap { $0.metadata["page"] }) == [
                1, 2, 3, 4,
            ]
        )
        #expect(
            records.filter { $0.documentKey == "pdf/xz-faq-scanned.pdf" }.allSatisfy { $0.metadata["ocr_pages"] == 1 }
        )
        #expect(records.contains { $0.documentKey == "images/xz-faq-page.jpg" && $0.metadata["format"] == "jpeg" })
    }

    @Test(
        "without sluice-extract-worker beside it, or with one of another build, sluice starts its own extract-worker subcommand as the workers, with the same records"
    )
    func workersFallBackToTheSubcommand() async throws {
        let ws = try Workspace("fallback")
        defer { ws.cleanUp() }
        try Self.copySamples(["pdf/xz-utils-faq.pdf", "images/xz-faq-page.png"], into: ws)
        // `sluice` alone in a folder (a hard link, so /proc/self/exe names this folder; a copy where linking fails).
        let alone = ws.root.appendingPathComponent("alone")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        let sluice = alone.appendingPathComponent("sluice")
        let built = try SluiceExecutable.url()
        if link(built.path, sluice.path) != 0 { try FileManager.default.copyItem(at: built, to: sluice) }
        #expect(!FileManager.default.fileExists(atPath: alone.appendingPathComponent("sluice-extract-worker").path))

        let fallback = ws.target("fallback")
        let trace = ws.file("worker-trace")
        try FileManager.default.createDirectory(at: trace, withIntermediateDirectories: true)
        let result = try await ws.start(
            ws.runArguments(fallback, Self.allFormats),
            environment: ["SLUICE_DEBUG_WORKER_TRACE": trace.path],
            executable: sluice
        ).wait(timeout: .seconds(120))
        #expect(result.exitCode == 0, "\(result)")
        let workers = Self.workersStarted(trace)
        #expect(!workers.isEmpty, "no extract worker started")
        #expect(workers.allSatisfy { $0 == "/proc/self/exe extract-worker" }, "\(workers)")
        #expect((try await ws.status(fallback)).documents == ["indexed": 2])

        // The same records as a run whose workers are the lean executable beside the built `sluice`.
        let lean = ws.target("lean")
        try await ws.run(lean, Self.allFormats, expecting: 0)
        expectSameExport(
            try await ws.export(fallback),
            try await ws.export(lean),
            "subcommand workers vs. lean workers"
        )

        // A `sluice-extract-worker` of another build beside it (one from before hellos) is not used: the run
        // warns, extracts through the subcommand, and ends with the same records.
        let stale = alone.appendingPathComponent("sluice-extract-worker")
        try Data("#!/bin/sh\nSLUICE_DEBUG_WORKER_HELLO=none exec '\(sluice.path)' extract-worker \"$@\"\n".utf8)
            .write(to: stale)
        chmod(stale.path, 0o755)
        let otherBuild = ws.target("other-build")
        let warned = try await ws.start(ws.runArguments(otherBuild, Self.allFormats), executable: sluice)
            .wait(timeout: .seconds(120))
        #expect(warned.exitCode == 0, "\(warned)")
        #expect(
            warned.stderr.components(separatedBy: "is from another build of Sluice (it sends no hello").count == 2,
            "one warning: \(warned.stderr)"
        )
        expectSameExport(
            try await ws.export(otherBuild),
            try await ws.export(lean),
            "subcommand workers after a worker of another build vs. lean workers"
        )
    }

    @Test(
        "without a loadable poppler-glib, sluice still starts and indexes text-layer PDFs and images; a scan fails alone, naming the library, and is indexed by the next run that can load it",
        arguments: [true, false]
    )
    func missingPopplerGlibFailsOnlyTheScans(isolate: Bool) async throws {
        let ws = try Workspace("noglib")
        defer { ws.cleanUp() }
        try Self.copySamples(["pdf/xz-utils-faq.pdf", "pdf/xz-faq-scanned.pdf", "images/xz-faq-heading.bmp"], into: ws)
        // poppler-glib made unloadable (see BrokenLibraries) for `sluice` and, through it, for its workers.
        let broken = try BrokenLibraries.folder(["libpoppler-glib.so.8", "libpoppler-glib.so"])
        defer { try? FileManager.default.removeItem(at: broken) }
        let main = ws.target("main")
        let arguments = ws.runArguments(main, Self.allFormats + ["--set", "extract.isolate=\(isolate)"])
        let without = try await ws.sluice(
            arguments,
            environment: ["LD_LIBRARY_PATH": broken.path],
            timeout: .seconds(120)
        )
        #expect(without.exitCode == 2, "\(without)")
        let status = try await ws.status(main)
        #expect(status.documents == ["indexed": 2, "failed": 1], "\(status.text)")
        let reason = status.failures["pdf/xz-faq-scanned.pdf"] ?? ""
        #expect(reason.contains("configuration") && reason.contains("libpoppler-glib.so.8"), "\(reason)")

        // Not a known failure (DESIGN.md §11): once the library loads, the next run indexes the scan.
        try await ws.run(main, Self.allFormats + ["--set", "extract.isolate=\(isolate)"], expecting: 0)
        #expect((try await ws.status(main)).documents == ["indexed": 3])
        let records = try Export.records(try await ws.export(main))
        #expect(
            records.contains {
                $0.documentKey == "pdf/xz-faq-scanned.pdf" && $0.metadata["ocr_pages"] == 1
                    && $0.text.contains("What do the letters XZ mean")
            }
        )
    }

    @Test("libgomp in sluice sees OMP_THREAD_LIMIT=1 when started without it; an explicit value is kept")
    func openMPLimitIsInForceFromProcessStart() async throws {
        let ws = try Workspace("omp")
        defer { ws.cleanUp() }
        let unset = try await ws.sluice(["openmp-limit"], environment: ["OMP_THREAD_LIMIT": nil])
        #expect(unset.stdout.contains("OMP_THREAD_LIMIT=1 omp_get_thread_limit=1"), "\(unset)")
        let explicit = try await ws.sluice(["openmp-limit"], environment: ["OMP_THREAD_LIMIT": "3"])
        #expect(explicit.stdout.contains("OMP_THREAD_LIMIT=3 omp_get_thread_limit=3"), "\(explicit)")
    }

    // MARK: /proc helpers

    static func children(of pid: Int32) -> [Int32] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.flatMap { task -> [Int32] in
            let text = (try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? ""
            return text.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    /// The command lines (first two words) of the workers that started with `SLUICE_DEBUG_WORKER_TRACE`
    /// naming `folder`, one a worker.
    static func workersStarted(_ folder: URL) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.map { (try? String(contentsOf: folder.appendingPathComponent($0), encoding: .utf8)) ?? "" }
    }

    static func commandLine(_ pid: Int32) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data.map { $0 == 0 ? 0x20 : $0 }, as: UTF8.self)
    }

    static func environment(of pid: Int32) -> [String: String] {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ") ?? Data()
        var out: [String: String] = [:]
        for entry in data.split(separator: 0) {
            let text = String(decoding: entry, as: UTF8.self)
            if let equals = text.firstIndex(of: "=") {
                out[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
        }
        return out
    }
}
