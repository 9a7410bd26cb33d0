import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// The package's `samples/` folder, found from this file's path (Tests/SluiceExtractTests/…).
private let samples = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .deletingLastPathComponent()
    .appendingPathComponent("samples")

@Suite struct OCREngineTests {
    @Test func recognizesCommittedPageWithHighCharacterAccuracy() throws {
        let image = samples.appendingPathComponent("images/xz-faq-page.png").path
        let expected = try String(
            contentsOf: samples.appendingPathComponent("images/xz-faq-page.expected.txt"),
            encoding: .utf8
        )
        let engine = try OCREngine(languages: ["eng"])
        let result = try engine.recognize(imageAt: image)

        let accuracy = Self.characterAccuracy(recognized: result.text, expected: expected)
        #expect(accuracy > 0.9, "character accuracy \(accuracy); recognized:\n\(result.text)")
        #expect(result.confidence > 70)
        #expect(result.text.contains("Lempel-Ziv-Markov"))
    }

    @Test func missingLanguageDataIsAClearError() {
        let error = #expect(throws: SluiceError.self) {
            try OCREngine(languages: ["eng", "xyz"])
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("xyz.traineddata") == true, "message: \(error?.message ?? "")")
        #expect(error?.message.contains("eng.traineddata") == false)
    }

    @Test func wrongDataPathIsAClearError() {
        let error = #expect(throws: SluiceError.self) {
            try OCREngine(languages: ["eng"], dataPath: "/nonexistent/tessdata")
        }
        #expect(error?.code == .configuration)
        #expect(error?.message.contains("/nonexistent/tessdata") == true)
    }

    @Test func unreadableImagesThrow() throws {
        let engine = try OCREngine()
        let missing = #expect(throws: SluiceError.self) {
            try engine.recognize(imageAt: samples.appendingPathComponent("images/missing.png").path)
        }
        #expect(missing?.code == .unreadable)
        let notAnImage = #expect(throws: SluiceError.self) {
            try engine.recognize(imageAt: samples.appendingPathComponent("bad/binary.txt").path)
        }
        #expect(notAnImage?.code == .unreadable)
    }

    @Test func characterAccuracyMeasure() {
        #expect(Self.characterAccuracy(recognized: "a  b\nc", expected: "a b c") == 1)
        #expect(Self.characterAccuracy(recognized: "kitten", expected: "sitting") == 1 - 3.0 / 7)
        #expect(Self.characterAccuracy(recognized: "", expected: "abc") == 0)
    }

    static func characterAccuracy(recognized: String, expected: String) -> Double {
        CharacterAccuracy.of(recognized: recognized, expected: expected)
    }
}
