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

    /// 1 − (edit distance ÷ expected length), after collapsing runs of whitespace to one space: layout
    /// differences (blank lines, indentation) do not count, misread characters do.
    static func characterAccuracy(recognized: String, expected: String) -> Double {
        let a = Array(normalize(recognized).unicodeScalars)
        let b = Array(normalize(expected).unicodeScalars)
        guard !b.isEmpty else { return a.isEmpty ? 1 : 0 }
        return max(0, 1 - Double(editDistance(a, b)) / Double(b.count))
    }

    private static func normalize(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }

    /// Levenshtein distance with two rows.
    private static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
