import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// Reads a file of the package's `samples/` folder and runs it through the standard extractors.
enum DocumentSamples {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("samples")

    static func input(_ relative: String) throws -> ExtractionInput {
        let url = root.appendingPathComponent(relative)
        return ExtractionInput(key: relative, fileURL: url, bytes: Array(try Data(contentsOf: url)))
    }

    static func input(named name: String, _ text: String) -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: Array(text.utf8))
    }

    /// The extractor the standard registry picks, and its output.
    static func extract(
        _ input: ExtractionInput,
        configuration: PipelineConfiguration.Extract = .init()
    ) throws -> (extractor: String, text: ExtractedText) {
        let registry = ExtractorRegistry.standard(configuration: configuration)
        let extractor = try #require(registry.extractor(for: input))
        return (extractor.name, try extractor.extract(input))
    }

    static func extract(
        _ relative: String,
        configuration: PipelineConfiguration.Extract = .init()
    ) throws
        -> (extractor: String, text: ExtractedText)
    {
        try extract(input(relative), configuration: configuration)
    }

    /// The error a failing extraction throws.
    static func failure(
        _ input: ExtractionInput,
        configuration: PipelineConfiguration.Extract = .init()
    ) throws -> SluiceError {
        do {
            let result = try extract(input, configuration: configuration)
            throw TestFailure("\(input.key) was extracted by \(result.extractor) instead of failing")
        } catch let error as SluiceError {
            return error
        }
    }

    static func failure(
        _ relative: String,
        configuration: PipelineConfiguration.Extract = .init()
    ) throws -> SluiceError {
        do {
            let result = try extract(relative, configuration: configuration)
            throw TestFailure("\(relative) was extracted by \(result.extractor) instead of failing")
        } catch let error as SluiceError {
            return error
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension ExtractedText {
    /// All sections' text, joined by blank lines.
    var fullText: String { sections.map(\.text).joined(separator: "\n\n") }
}
