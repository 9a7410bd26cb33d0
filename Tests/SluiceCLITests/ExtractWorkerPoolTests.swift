import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// The worker processes of the built `sluice` binary against the same extractors in process.
@Suite struct ExtractWorkerPoolTests {
    static let samples = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    /// With the default budget a short PDF is read whole by the worker that opens it; with none, it is
    /// read one page there and the rest in ranges on both workers, which keep two documents open.
    @Test(
        "worker processes return a PDF's text as in process, read in one request or split into ranges over two workers",
        arguments: [nil, 0]
    )
    func sameTextAsInProcess(budgetMilliseconds: Int?) throws {
        var configuration = PipelineConfiguration.Extract()
        configuration.ocr.mode = .auto
        let pool = ExtractWorkerPool(
            command: .init(executable: try SluiceExecutable.url().path, arguments: ["extract-worker"]),
            options: .init(ocr: configuration.ocr, pdf: configuration.pdf),
            size: 2
        )
        defer {
            pool.shutdown()
            pool.waitUntilStopped()
        }
        var isolated = IsolatedExtractor(kind: .pdf, configuration: configuration, pool: pool)
        if let budgetMilliseconds { isolated.firstRequestBudget = .milliseconds(budgetMilliseconds) }
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
}
