import Foundation
import SluiceCore
import SluiceExtract
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
        let options = ExtractWorkerProtocol.Options(ocr: ocr, pdf: .init())
        let optionsJSON = String(decoding: try JSONEncoder().encode(options), as: UTF8.self)
        let process = Process()
        if lean {
            process.executableURL = try Self.leanWorker()
            process.arguments = [optionsJSON]
        } else {
            process.executableURL = try SluiceExecutable.url()
            process.arguments = ["extract-worker", optionsJSON]
        }
        var environment = ProcessInfo.processInfo.environment
        environment["OMP_THREAD_LIMIT"] = "1"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer {
            try? input.fileHandleForWriting.close()
            process.waitUntilExit()
        }
        var reader = LineReader(fd: output.fileHandleForReading.fileDescriptor)
        // The worker's first line says which build it is.
        guard case .line(let first) = reader.next(deadline: nil) else {
            throw SluiceError(.extractionFailed, "the worker wrote no hello")
        }
        #expect(ExtractWorkerProtocol.decodeHello(first) == .init(worker: ExtractWorkerProtocol.compatibility))

        func ask(_ request: String) throws -> ExtractWorkerProtocol.Response {
            input.fileHandleForWriting.write(Data((request + "\n").utf8))
            guard case .line(let line) = reader.next(deadline: nil),
                let response = ExtractWorkerProtocol.decodeResponse(line)
            else { throw SluiceError(.extractionFailed, "the worker did not answer \(request)") }
            #expect(response.failure == nil, "\(request)")
            return response
        }
        func mapsTesseract() throws -> Bool {
            // Read to the end: /proc files report no size, and a one-shot read stops at the first page.
            let maps = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(process.processIdentifier)/maps"))
            defer { try? maps.close() }
            return String(decoding: try maps.readToEnd() ?? Data(), as: UTF8.self).contains("libtesseract")
        }

        let pdf = Self.samples.appendingPathComponent("pdf/fontconfig-user.pdf").path
        let opened = try ask(#"{"id":1,"kind":"pdf-info","path":"\#(pdf)","first":0,"count":32}"#)
        #expect(opened.info != nil)
        #expect(opened.pages?.first?.text.contains("fonts") == true)
        let mappedAfterTextLayer = try mapsTesseract()
        #expect(mappedAfterTextLayer == false, "a text-layer PDF loaded libtesseract")

        let image = Self.samples.appendingPathComponent("images/xz-faq-heading.bmp").path
        let recognized = try ask(#"{"id":2,"kind":"image","path":"\#(image)"}"#)
        #expect(recognized.image?.text.contains("XZ Utils") == true)
        let mappedAfterOCR = try mapsTesseract()
        #expect(mappedAfterOCR == true, "OCR ran without libtesseract mapped?")
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
        process.waitUntilExit()
        #expect(process.terminationStatus == RunExitCode.usage.rawValue)
    }
}
