import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

/// One `sluice extract-worker` process, spoken to over its pipes as the pool does.
@Suite struct ExtractWorkerTests {
    static let samples = ExtractWorkerPoolTests.samples

    /// libtesseract (and leptonica, libgomp, libcurl… with it) is loaded at the first OCR: a worker that only
    /// reads text layers never maps it, which keeps its start as cheap as the PDF library's.
    @Test(
        "a worker that reads only text layers never loads libtesseract; its first OCR does",
        .serialized,
        arguments: [true, false]
    )
    func tesseractIsLoadedAtTheFirstOCR(lean: Bool) throws {
        var ocr = PipelineConfiguration.Extract.OCR()
        ocr.mode = .never  // text layers only (with `auto`, a page with little text is OCR'd)
        let worker = try Worker(lean: lean, ocr: ocr)
        defer { worker.stop() }

        let pdf = Self.samples.appendingPathComponent("pdf/fontconfig-user.pdf").path
        let opened = try worker.ask(#"{"id":1,"kind":"pdf-info","path":"\#(pdf)","first":0,"count":32}"#)
        #expect(opened.failure == nil && opened.info != nil)
        #expect(opened.pages?.first?.text.contains("fonts") == true)
        let mappedAfterTextLayer = try worker.maps("libtesseract")
        #expect(mappedAfterTextLayer == false, "a text-layer PDF loaded libtesseract")

        let image = Self.samples.appendingPathComponent("images/xz-faq-heading.bmp").path
        let recognized = try worker.ask(#"{"id":2,"kind":"image","path":"\#(image)"}"#)
        #expect(recognized.failure == nil && recognized.image?.text.contains("XZ Utils") == true)
        let mappedAfterOCR = try worker.maps("libtesseract")
        #expect(mappedAfterOCR == true, "OCR ran without libtesseract mapped?")
    }

    /// poppler-glib (with cairo, glib, gio, pixman and the X11 client libraries: 22 shared libraries) renders
    /// pages for OCR and nothing else, so it is loaded at the first page rendered: a worker that reads text
    /// layers or OCRs images never maps it.
    @Test(
        "a worker loads poppler-glib and cairo at the first page it renders for OCR, not for text layers or images",
        .serialized,
        arguments: [true, false]
    )
    func popplerGlibIsLoadedAtTheFirstPageRendered(lean: Bool) throws {
        let worker = try Worker(lean: lean, ocr: .init())  // OCR `auto`: pages without a text layer are rendered
        defer { worker.stop() }
        let rendering = ["libpoppler-glib", "libcairo", "libglib-2.0", "libgobject-2.0"]

        // Every page has a text layer of 16 characters or more (fontconfig-user.pdf's page 14 has not: it is
        // rendered, and OCR'd, in `auto` mode).
        let pdf = Self.samples.appendingPathComponent("pdf/shared-mime-info-spec.pdf").path
        let opened = try worker.ask(#"{"id":1,"kind":"pdf-info","path":"\#(pdf)","first":0,"count":32}"#)
        #expect(opened.failure == nil && opened.pages?.count == 17)
        let image = Self.samples.appendingPathComponent("images/xz-faq-heading.bmp").path
        let recognized = try worker.ask(#"{"id":2,"kind":"image","path":"\#(image)"}"#)
        #expect(recognized.failure == nil && recognized.image?.text.contains("XZ Utils") == true)
        for library in rendering {
            let mapped = try worker.maps(library)
            #expect(mapped == false, "\(library) loaded without a page rendered")
        }

        let scan = Self.samples.appendingPathComponent("pdf/xz-faq-scanned.pdf").path
        let scanned = try worker.ask(#"{"id":3,"kind":"pdf-info","path":"\#(scan)","first":0,"count":32}"#)
        #expect(scanned.failure == nil, "\(String(describing: scanned.failure))")
        let page = scanned.pages?.first
        #expect(page?.ocrConfidence != nil && page?.text.contains("Q: What do the letters XZ mean?") == true)
        for library in rendering {
            let mapped = try worker.maps(library)
            #expect(mapped == true, "a page was rendered without \(library) mapped?")
        }
    }

    /// Without poppler-glib at run time, a worker still starts, reads text layers and OCRs images; only a
    /// document with a page to render fails, naming the library (the run goes on, and retries it next time).
    /// Made unloadable with an invalid file of its name first on `LD_LIBRARY_PATH` (which workers inherit).
    @Test(
        "without a loadable poppler-glib, text layers and images are still read; a page to render fails its document, naming the library",
        .serialized,
        arguments: [true, false]
    )
    func missingPopplerGlibFailsOnlyRendering(lean: Bool) throws {
        let folder = try BrokenLibraries.folder(["libpoppler-glib.so.8", "libpoppler-glib.so"])
        defer { try? FileManager.default.removeItem(at: folder) }
        let worker = try Worker(lean: lean, ocr: .init(), environment: ["LD_LIBRARY_PATH": folder.path])
        defer { worker.stop() }

        let pdf = Self.samples.appendingPathComponent("pdf/xz-utils-faq.pdf").path
        let opened = try worker.ask(#"{"id":1,"kind":"pdf-info","path":"\#(pdf)","first":0,"count":32}"#)
        #expect(opened.failure == nil && opened.pages?.count == 4, "\(String(describing: opened.failure))")
        let image = Self.samples.appendingPathComponent("images/xz-faq-heading.bmp").path
        let recognized = try worker.ask(#"{"id":2,"kind":"image","path":"\#(image)"}"#)
        #expect(recognized.failure == nil && recognized.image?.text.contains("XZ Utils") == true)

        let scan = Self.samples.appendingPathComponent("pdf/xz-faq-scanned.pdf").path
        for id in [3, 4] {  // the second time too: the load is tried once per process, and fails the same way
            let failed = try worker.ask(#"{"id":\#(id),"kind":"pdf-info","path":"\#(scan)","first":0,"count":32}"#)
            #expect(failed.failure?.code == SluiceError.Code.configuration.rawValue)
            let message = failed.failure?.message ?? ""
            #expect(
                message.contains("cannot load poppler-glib") && message.contains("libpoppler-glib.so.8"),
                "\(message)"
            )
        }
    }

    /// One extract worker process (`sluice-extract-worker`, or `sluice extract-worker`), spoken to over its
    /// pipes as the pool does.
    final class Worker {
        let process = Process()
        let input = Pipe()
        let output = Pipe()
        var reader: LineReader

        init(lean: Bool, ocr: PipelineConfiguration.Extract.OCR, environment extra: [String: String] = [:]) throws {
            let options = ExtractWorkerProtocol.Options(ocr: ocr, pdf: .init())
            let optionsJSON = String(decoding: try JSONEncoder().encode(options), as: UTF8.self)
            if lean {
                process.executableURL = try ExtractWorkerTests.leanWorker()
                process.arguments = [optionsJSON]
            } else {
                process.executableURL = try SluiceExecutable.url()
                process.arguments = ["extract-worker", optionsJSON]
            }
            var environment = ProcessInfo.processInfo.environment
            environment["OMP_THREAD_LIMIT"] = "1"
            environment.merge(extra) { $1 }
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
            try process.run()
            // The worker's first line says which build it is.
            guard case .line(let first) = reader.next(deadline: ContinuousClock.now + .seconds(120)) else {
                throw SluiceError(.extractionFailed, "the worker wrote no hello")
            }
            #expect(ExtractWorkerProtocol.decodeHello(first) == .init(worker: ExtractWorkerProtocol.compatibility))
        }

        func stop() {
            try? input.fileHandleForWriting.close()
            // Not waitUntilExit: it can spin forever on a child that has ended (ProcessExit says why).
            ProcessExit.wait(for: process)
        }

        func ask(_ request: String) throws -> ExtractWorkerProtocol.Response {
            input.fileHandleForWriting.write(Data((request + "\n").utf8))
            guard case .line(let line) = reader.next(deadline: ContinuousClock.now + .seconds(120)),
                let response = ExtractWorkerProtocol.decodeResponse(line)
            else { throw SluiceError(.extractionFailed, "the worker did not answer \(request)") }
            return response
        }

        /// Whether a shared library whose path contains `library` is mapped into the worker.
        func maps(_ library: String) throws -> Bool {
            // Read to the end: /proc files report no size, and a one-shot read stops at the first page.
            let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/maps"))
            defer { try? maps.close() }
            return String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self).contains(library)
        }
    }

    /// `sluice-extract-worker`, built beside `sluice` (every product of a build lands in one folder).
    static func leanWorker() throws -> URL {
        let url = try SluiceExecutable.url().deletingLastPathComponent().appendingPathComponent("sluice-extract-worker")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw SluiceError(.configuration, "no sluice-extract-worker beside sluice (swift build --build-tests)")
        }
        return url
    }

    /// Malformed options are a usage error, not a worker that starts and then fails every request.
    @Test func theLeanWorkerRefusesMalformedOptions() throws {
        let process = Process()
        process.executableURL = try Self.leanWorker()
        process.arguments = ["{not json"]
        process.standardError = FileHandle.nullDevice
        try process.run()
        let exit = ProcessExit.wait(for: process)
        #expect(!exit.signaled && exit.status == RunExitCode.usage.rawValue)
    }
}

/// Shared libraries made unloadable for a test: a folder with a file of each name that is not a library, to
/// put first on `LD_LIBRARY_PATH`. The dynamic loader stops at the first file of the name it finds, so a
/// `dlopen` of that name fails (with "file too short") as it does when the library is not installed.
enum BrokenLibraries {
    static func folder(_ names: [String]) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sluice-broken-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for name in names {
            try Data("not a shared library\n".utf8).write(to: folder.appendingPathComponent(name))
        }
        return folder
    }
}
