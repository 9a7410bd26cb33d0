import SluiceCore
import Testing

@testable import SluiceState

@Suite struct ExtractedTextCodingTests {
    private let text = ExtractedText(
        sections: [
            TextSection(
                text: "Première page — naïve café, 日本語, emoji 🙂.",
                page: 1,
                headingPath: ["Titre", "Sous-titre"],
                metadata: ["line": "3"]
            ),
            TextSection(text: "", page: nil),
            TextSection(
                text: String(repeating: "long text ", count: 2_000),
                page: 300,
                metadata: ["rows": "1-20", "empty": ""]
            ),
        ],
        metadata: ["format": "pdf", "pages": "300", "title": "Ein Bericht"]
    )

    @Test func roundTrips() {
        #expect(ExtractedTextCoding.decode(ExtractedTextCoding.encode(text)) == text)
        let empty = ExtractedText(sections: [])
        #expect(ExtractedTextCoding.decode(ExtractedTextCoding.encode(empty)) == empty)
    }

    @Test func isCompact() {
        let encoded = ExtractedTextCoding.encode(text)
        #expect(encoded.count < text.utf8Count + 200)
    }

    @Test func everyTruncationAndDamageIsRejected() {
        let encoded = ExtractedTextCoding.encode(text)
        for length in stride(from: 0, to: encoded.count, by: 97) {
            #expect(ExtractedTextCoding.decode(Array(encoded.prefix(length))) == nil)
        }
        for position in stride(from: 0, to: encoded.count, by: 131) {
            var damaged = encoded
            damaged[position] ^= 0x20
            #expect(ExtractedTextCoding.decode(damaged) == nil, "byte \(position)")
        }
        #expect(ExtractedTextCoding.decode(encoded + [0]) == nil)
    }
}
