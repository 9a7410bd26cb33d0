import Foundation
import SluiceCore
import SluiceExtract
import SluiceTesting
import Synchronization
import Testing

/// The worker processes of the built `sluice` binary against the same extractors in process.
@Suite struct ExtractWorkerPoolTests {
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    /// Two workers of the built binary, and the PDF extractor that uses them (reading the first pages for
    /// `budgetMilliseconds` before splitting the rest, when given).
    static func isolatedPDF(
        _ configuration: PipelineConfiguration.Extract,
        budgetMilliseconds: Int?
    ) throws -> (ExtractWorkerPool, IsolatedExtractor) {
        let pool = ExtractWorkerPool(
            command: .init(executable: try SluiceExecutable.url().path, arguments: ["extract-worker"]),
            options: .init(ocr: configuration.ocr, pdf: configuration.pdf),
            size: 2
        )
        var isolated = IsolatedExtractor(kind: .pdf, configuration: configuration, pool: pool)
        if let budgetMilliseconds { isolated.firstRequestBudget = .milliseconds(budgetMilliseconds) }
        return (pool, isolated)
    }

    /// With the default budget a short PDF is read whole by the worker that opens it; with none, it is
    /// read one page there and the rest in ranges on both workers, which keep two documents open.
    @Test(
        "worker processes return a PDF's text as in process, read in one request or split into ranges over two workers",
        arguments: [nil, 0]
    )
    func sameTextAsInProcess(budgetMilliseconds: Int?) throws {
        var configuration = PipelineConfiguration.Extract()
        configuration.ocr.mode = .auto
        let (pool, isolated) = try Self.isolatedPDF(configuration, budgetMilliseconds: budgetMilliseconds)
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        let inProcess = PDFExtractor(pdf: configuration.pdf, engines: OCREnginePool(options: configuration.ocr))
        let paths = [
            "pdf/fontconfig-user.pdf", "pdf/shared-mime-info-spec.pdf", "pdf/mixed-text-and-scan.pdf",
            "pdf/fontconfig-user.pdf",
        ]
        for path in paths {
            let url = Self.samples.appendingPathComponent(path)
            let input = ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
            let expected = try inProcess.extract(input)
            let actual = try isolated.extract(input)
            #expect(actual == expected, "\(path)")
            #expect(actual.sections.compactMap(\.page) == expected.sections.compactMap(\.page), "\(path)")
        }
    }

    /// A PDF's pictures for captions (`extract.images.caption.pictures`) are decoded by poppler in a worker
    /// process, as its text is read there; the PNGs that come back are those poppler and cairo write in process.
    @Test("a PDF's pictures decoded in a worker process are those decoded in process")
    func picturesAsInProcess() throws {
        let (pool, isolated) = try Self.isolatedPDF(PipelineConfiguration.Extract(), budgetMilliseconds: nil)
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        let url = Self.samples.deletingLastPathComponent()
            .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/pictures.pdf")
        let input = ExtractionInput(key: "pictures.pdf", fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        for selection in [
            PictureSelection(minSidePixels: 100, maxCount: 20), PictureSelection(minSidePixels: 10, maxCount: 1),
        ] {
            let expected = try EmbeddedPictures.list(
                input.bytes,
                path: url.path,
                extractor: "pdf",
                zip: PipelineConfiguration.Extract.ZIP(),
                selection: selection
            )
            #expect(!expected.pictures.isEmpty)
            let actual = try EmbeddedPictures.list(
                input,
                extractor: isolated,
                zip: PipelineConfiguration.Extract.ZIP(),
                selection: selection
            )
            #expect(actual == expected, "\(selection)")
        }
    }

    /// `extract.max_text_mb` holds in the workers: the worker that reads a range stops at the first page
    /// past the document's bound and answers `text-too-large`, rather than send every page of its range.
    @Test("a worker stops at the document's text bound and answers text-too-large", arguments: [nil, 0])
    func workersStopAtTheTextBound(budgetMilliseconds: Int?) throws {
        let configuration = PipelineConfiguration.Extract()
        let (pool, isolated) = try Self.isolatedPDF(configuration, budgetMilliseconds: budgetMilliseconds)
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        let path = "pdf/fontconfig-user.pdf"
        let url = Self.samples.appendingPathComponent(path)
        var input = ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        let whole = try isolated.extract(input).utf8Count
        #expect(whole > 24 << 10, "the sample is too short for this test: \(whole) bytes")
        input.maxTextBytes = 4 << 10
        let error = #expect(throws: SluiceError.self) { try isolated.extract(input) }
        #expect(error?.code == .textTooLarge, "\(String(describing: error))")
        // Stopped within a page of the bound (a page of this manual is a few KB), not after a range (all
        // of its 32 KB: the first request asks for up to 32 pages).
        let message = error?.message ?? ""
        let after = message.range(of: "stopped after ").map { message[$0.upperBound...] } ?? ""
        let kilobytes = Int(after.prefix { $0.isNumber }) ?? .max
        #expect(after.hasPrefix("\(kilobytes) KB") && kilobytes < 16, "\(message)")
    }
}

/// A `sluice-extract-worker` from another build (left beside a newer `sluice`) is never used.
@Suite struct ExtractWorkerCompatibilityTests {
    /// A stand-in for a worker of another build: the real worker with its hello changed by the debug hook
    /// (`none`: a worker from before hellos, which answers its first request at once).
    static func otherBuildWorker(hello: String, in folder: URL) throws -> String {
        let script = folder.appendingPathComponent("sluice-extract-worker")
        let sluice = try SluiceExecutable.url().path
        let text = "#!/bin/sh\nSLUICE_DEBUG_WORKER_HELLO='\(hello)' exec '\(sluice)' extract-worker \"$@\"\n"
        // Written through a descriptor closed on exec: a process another test starts meanwhile would
        // otherwise inherit it open for writing, and starting the script then fails with ETXTBSY ("Text file
        // busy", seen once in a fresh-clone CI run).
        let descriptor = open(script.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count else { throw CocoaError(.fileWriteUnknown) }
        chmod(script.path, 0o755)
        return script.path
    }

    static let reports = ["none", "sluice=0.0.1 protocol=0 pdf=1 image=1"]

    @Test(
        "a worker of another build is replaced by the fallback, which extracts as in process; the user is told once",
        arguments: reports
    )
    func otherBuildFallsBack(hello: String) throws {
        let folder = try TemporaryDirectory.make("worker-build")
        defer { TemporaryDirectory.remove(folder) }
        var configuration = PipelineConfiguration.Extract()
        configuration.ocr.mode = .auto
        let notices = Mutex<[String]>([])
        let pool = ExtractWorkerPool(
            command: .init(
                executable: try Self.otherBuildWorker(hello: hello, in: folder),
                arguments: [],
                fallback: .init(executable: try SluiceExecutable.url().path, arguments: ["extract-worker"])
            ),
            options: .init(ocr: configuration.ocr, pdf: configuration.pdf),
            size: 2,
            notice: { message in notices.withLock { $0.append(message) } }
        )
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        var isolated = IsolatedExtractor(kind: .pdf, configuration: configuration, pool: pool)
        isolated.firstRequestBudget = .zero  // ranges on both workers: each driver meets the other build
        let inProcess = PDFExtractor(pdf: configuration.pdf, engines: OCREnginePool(options: configuration.ocr))
        for path in ["pdf/fontconfig-user.pdf", "pdf/mixed-text-and-scan.pdf"] {
            let url = ExtractWorkerPoolTests.samples.appendingPathComponent(path)
            let input = ExtractionInput(key: path, fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
            #expect(try isolated.extract(input) == inProcess.extract(input), "\(path)")
        }
        let told = notices.withLock { $0 }
        #expect(told.count == 1, "\(told)")
        let expected = hello == "none" ? "it sends no hello" : "it reports \"\(hello)\""
        #expect(told.first?.contains("is from another build of Sluice (\(expected)") == true, "\(told)")
        #expect(
            told.first?.contains("the workers run as `\(try SluiceExecutable.url().path) extract-worker` instead")
                == true
        )
    }

    @Test("without a fallback, a worker of another build fails the document with the reason", arguments: reports)
    func otherBuildWithoutFallbackFails(hello: String) throws {
        let folder = try TemporaryDirectory.make("worker-build")
        defer { TemporaryDirectory.remove(folder) }
        let configuration = PipelineConfiguration.Extract()
        let pool = ExtractWorkerPool(
            command: .init(executable: try Self.otherBuildWorker(hello: hello, in: folder), arguments: []),
            options: .init(ocr: configuration.ocr, pdf: configuration.pdf),
            size: 1
        )
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        let isolated = IsolatedExtractor(kind: .pdf, configuration: configuration, pool: pool)
        let url = ExtractWorkerPoolTests.samples.appendingPathComponent("pdf/fontconfig-user.pdf")
        let input = ExtractionInput(key: "a.pdf", fileURL: url, bytes: [UInt8](try Data(contentsOf: url)))
        let error = #expect(throws: SluiceError.self) { try isolated.extract(input) }
        #expect(error?.code == .extractionFailed)
        #expect(error?.message.contains("is from another build of Sluice") == true, "\(String(describing: error))")
        #expect(error?.message.contains(ExtractWorkerProtocol.compatibility) == true)
    }
}
