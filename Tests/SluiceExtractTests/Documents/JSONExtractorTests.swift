import Foundation
import SluiceCore
import SluiceExtract
import Testing

/// How `JSONExtractor` tells JSON Lines from one JSON document when the name does not say: by the shape of
/// the bytes (a first line that is a whole value, followed by more), never by the wording of an error.
@Suite struct JSONExtractorTests {
    func extract(_ name: String, _ text: String) throws -> ExtractedText {
        try JSONExtractor().extract(DocumentSamples.input(named: name, text))
    }

    func failure(_ name: String, _ text: String) throws -> SluiceError {
        do {
            let extracted = try extract(name, text)
            throw DocumentSamples.TestFailure("\(name) was extracted (\(extracted.metadata)) instead of failing")
        } catch let error as SluiceError {
            return error
        }
    }

    @Test func aFirstLineThatIsAWholeValueFollowedByMoreIsJSONLines() throws {
        let text = try extract("events.log", "{\"a\": \"one\"}\n{\"a\": \"two\"}\n\n[\"three\"]\n")
        #expect(text.metadata["format"] == "jsonl")
        #expect(text.sections.map { $0.metadata["line"] } == ["1", "2", "4"])
        #expect(text.sections[1].text == "$.a: two")
    }

    @Test func aSingleDocumentStaysJSON() throws {
        let text = try extract("config.data", "{\n  \"a\": \"one\",\n  \"b\": [\"two\"]\n}\n")
        #expect(text.metadata["format"] == "json")
    }

    /// A bad second line of JSON Lines is named by its line, as with the `.jsonl` extension.
    @Test func aBadLineOfUnnamedJSONLinesIsNamed() throws {
        let error = try failure("events.log", "{\"a\": \"one\"}\n{\"a\": tw}\n")
        #expect(error.code == .malformed)
        #expect(error.message.contains("line 2, column 7"), "\(error.message)")
    }

    /// A value spread over several lines followed by another is not JSON Lines (its first line is not a
    /// value): the error names where the document goes wrong (after the end of the first value), not a
    /// "missing }" on line 1 as a JSON Lines reading would.
    @Test func aMultiLineValueFollowedByMoreIsOneBadDocument() throws {
        let error = try failure("config.data", "{\n  \"a\": \"one\"\n}\n{\"b\": \"two\"}\n")
        #expect(error.code == .malformed)
        #expect(error.message.contains("line 4, column 1"), "\(error.message)")
        #expect(error.message.contains("after the end of the JSON value"), "\(error.message)")
    }

    /// Two values on the first line are not JSON Lines either.
    @Test func twoValuesOnTheFirstLineAreOneBadDocument() throws {
        let error = try failure("config.data", "{\"a\": \"one\"} {\"b\": \"two\"}\n{\"c\": \"three\"}\n")
        #expect(error.message.contains("line 1, column 14"), "\(error.message)")
    }

    /// Too deep is a limit, not a sign of JSON Lines, wherever it happens.
    @Test func tooDeepOnALaterLineIsTooDeep() throws {
        let deep = String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
        let error = try failure("events.log", "{\"a\": \"one\"}\n\(deep)\n")
        #expect(error.code == .tooDeep)
        #expect(error.message.contains("line 2"), "\(error.message)")
    }
}
