import Foundation
import Testing

@testable import SluiceCore

/// The `extract.ocr`, `extract.pdf` and `extract.isolate` keys.
@Suite struct PipelineConfigurationMediaTests {
    func load(_ yaml: String, overrides: [String] = []) throws -> PipelineConfiguration {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "pipeline-media-\(UInt32.random(in: 0...UInt32.max)).yaml"
        )
        try yaml.write(to: url, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: url) }
        return try PipelineConfiguration.load(file: url, overrides: overrides)
    }

    @Test func defaults() throws {
        let c = try load("")
        #expect(c.extract.ocr.mode == .auto)
        #expect(c.extract.ocr.languages == ["eng"])
        #expect(c.extract.ocr.pageSegmentationMode == 3)
        #expect(c.extract.ocr.dpi == 300)
        #expect(c.extract.pdf.stripHeadersFooters == false)
        #expect(c.extract.pdf.joinHyphens)
        #expect(c.extract.pdf.passwordEnvironmentVariable == nil)
        #expect(c.extract.isolate)
    }

    @Test func mappingForm() throws {
        let c = try load(
            """
            extract:
              isolate: false
              ocr: { mode: always, languages: [eng, deu], psm: 6, dpi: 200, min_text_chars: 40 }
              pdf: { strip_headers: true, join_hyphens: false, password_env: PDF_PASSWORD }
            """
        )
        #expect(c.extract.ocr.mode == .always)
        #expect(c.extract.ocr.languages == ["eng", "deu"])
        #expect(c.extract.ocr.pageSegmentationMode == 6)
        #expect(c.extract.ocr.dpi == 200)
        #expect(c.extract.ocr.minTextCharacters == 40)
        #expect(c.extract.pdf.stripHeadersFooters)
        #expect(!c.extract.pdf.joinHyphens)
        #expect(c.extract.pdf.passwordEnvironmentVariable == "PDF_PASSWORD")
        #expect(!c.extract.isolate)
    }

    @Test func scalarShorthandAndOverrides() throws {
        #expect(try load("extract: { ocr: never }").extract.ocr.mode == .never)
        let c = try load("", overrides: ["extract.ocr.mode=always", "extract.ocr.psm=11"])
        #expect(c.extract.ocr.mode == .always)
        #expect(c.extract.ocr.pageSegmentationMode == 11)
    }

    @Test(arguments: [
        ("extract: { ocr: sometimes }", "extract.ocr"),
        ("extract: { ocr: { mode: maybe } }", "extract.ocr.mode"),
        ("extract: { ocr: { psm: 14 } }", "extract.ocr.psm"),
        ("extract: { ocr: { dpi: 20 } }", "extract.ocr.dpi"),
        ("extract: { ocr: { langs: [eng] } }", "extract.ocr.langs"),
        ("extract: { pdf: { password: hunter2 } }", "extract.pdf.password"),
    ])
    func errorsNameTheKey(yaml: String, key: String) throws {
        let error = #expect(throws: SluiceError.self) { try load(yaml) }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains(key) == true, "\(error?.message ?? "")")
    }
}
