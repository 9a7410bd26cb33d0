import Foundation
import SluiceCore
import SluiceHTTP
import SluiceTesting
import Testing

@testable import SluiceEmbed

/// The embeddings answer read by ``OpenAIEmbeddingsScan`` gives what `JSONSerialization` gave before: the same
/// vectors bit for bit (negative zero, NaN's and infinity's patterns in base64 included), the same refusal with
/// the same words, on real-shaped answers, on edge cases and on broken ones; and the scan does answer the
/// shapes providers send, so the comparison is not between the old reading and itself.
@Suite struct OpenAIEmbeddingsScanTests {
    let dialect = OpenAIDialect(azure: false)

    /// What a reading ended in: the vectors as bit patterns, or the error's description.
    enum Outcome: Equatable {
        case success([[UInt32]])
        case failure(String)
    }

    /// The old reading and the new one.
    func outcomes(_ body: String, count: Int) -> (old: Outcome, new: Outcome) {
        let response = HTTPResponse(status: 200, body: Array(body.utf8))
        func run(_ read: () throws -> [[Float]]) -> Outcome {
            do { return .success(try read().map { $0.map(\.bitPattern) }) } catch { return .failure("\(error)") }
        }
        return (
            run { try dialect.vectorsFromJSONObject(response, count: count) },
            run { try dialect.vectors(from: response, count: count) }
        )
    }

    func scanned(_ body: String, count: Int) -> [[UInt32]]? {
        OpenAIEmbeddingsScan.vectors(in: Array(body.utf8), count: count)?.map { $0.map(\.bitPattern) }
    }

    static func base64(_ values: [Float]) -> String {
        var bytes: [UInt8] = []
        for value in values { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 } }
        return Data(bytes).base64EncodedString()
    }

    /// An answer as OpenAI (and the stand-in, through Python's `json.dumps`) writes it.
    static func answer(_ embeddings: [String], order: [Int]? = nil, separator: String = " ") -> String {
        let items = (order ?? Array(embeddings.indices)).map {
            #"{"object":\#(separator)"embedding",\#(separator)"index":\#(separator)\#($0),\#(separator)"embedding":\#(separator)\#(embeddings[$0])}"#
        }
        return
            #"{"object": "list", "data": [\#(items.joined(separator: ", "))], "model": "text-embedding-3-small", "usage": {"prompt_tokens": 12, "total_tokens": 12}}"#
    }

    @Test func base64AnswersAreScannedAndEqual() throws {
        var generator = SplitMix64(seed: 33)
        for dimensions in [1, 2, 3, 63, 64, 256, 1536] {
            let vectors = (0..<5).map { _ in
                (0..<dimensions).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: generator.next())) }
            }
            let body = Self.answer(vectors.map { "\"\(Self.base64($0))\"" }, order: [3, 0, 4, 1, 2])
            let (old, new) = outcomes(body, count: 5)
            #expect(old == new)
            #expect(old == .success(vectors.map { $0.map(\.bitPattern) }))
            #expect(scanned(body, count: 5) != nil, "\(dimensions) dimensions")
        }
    }

    @Test func specialValuesInBase64() {
        let values: [Float] = [
            -0.0, 0, .nan, -.nan, .signalingNaN, .infinity, -.infinity, .leastNonzeroMagnitude,
            .greatestFiniteMagnitude, -.leastNormalMagnitude, Float(bitPattern: 0x0001_16C2),
        ]
        let body = Self.answer(["\"\(Self.base64(values))\""])
        let (old, new) = outcomes(body, count: 1)
        #expect(old == new)
        #expect(scanned(body, count: 1) == [values.map(\.bitPattern)])
    }

    /// Numbers as Python writes floats (`repr`), and other spellings JSON allows.
    @Test func floatListsAreScannedAndEqual() {
        let numbers = [
            "0.0", "-0.0", "0.1", "-0.022868817", "1e-05", "1.5e+38", "3.4028235e+38", "3.4028236e+38", "1e39",
            "-1e39", "4.9e-324", "1.401298464324817e-45", "7e-46", "1E5", "2.5E-3",
            "0.1000000000000000055511151231257827",
            "123456789012345678901234567890.5", "0.30000000000000004", "1.0000000596046448", "1.00000005960464478",
            "6.103515625e-05", "-2.2250738585072014e-308", "1.7976931348623157e308",
        ]
        let list = "[" + numbers.joined(separator: ", ") + "]"
        let body = Self.answer([list, "[\n  0.5 ,\t-0.25\r\n]", "[]"])
        let (old, new) = outcomes(body, count: 3)
        #expect(old == new)
        #expect(scanned(body, count: 3) != nil)
        if case .success(let vectors) = new {
            #expect(vectors[0].count == numbers.count)
            #expect(vectors[0][1] == (-0.0 as Float).bitPattern)
            #expect(vectors[0][8] == Float.infinity.bitPattern)
        } else {
            Issue.record("not read: \(new)")
        }
    }

    /// Shapes the scan leaves to `JSONSerialization` (it must, or it would read them otherwise), and broken
    /// answers: the outcome is the old one in every case.
    @Test(arguments: [
        // Integers read as integers by JSONSerialization: another rounding, and -0 is +0.
        #"{"data": [{"index": 0, "embedding": [0, 1, -0, 16777217, 123456789012345678]}]}"#,
        #"{"data": [{"index": 0, "embedding": [1e400]}]}"#,
        #"{"data": [{"index": 0, "embedding": [NaN, 0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [Infinity]}]}"#,
        #"{"data": [{"index": 0, "embedding": [true, 0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": ["0.5"]}]}"#,
        #"{"data": [{"index": 0, "embedding": [null]}]}"#,
        #"{"data": [{"index": 0, "embedding": [+0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [0.5,]}]}"#,
        #"{"data": [{"index": 0, "embedding": [00.5]}]}"#,
        #"{"data": [{"index": 1.0, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": -0, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": "0", "embedding": [0.5]}]}"#,
        #"{"data": [{"index": 0, "index": 0, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [0.5], "embedding": [0.25]}]}"#,
        #"{"data": [], "data": [{"index": 0, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "usage": {"total_tokens": 1, "total_tokens": 2}}"#,
        #"{"data": [{"index": 0, "embedding": [0.5], "object": "a", "object": "b"}]}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "model": "mod\u00e8le"}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "model": "modèle"}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "model": "a\/b"}"#,
        #"{"d\u0061ta": [{"index": 0, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAA=="}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAB=="}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAAAA"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAAA"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAA=AAAA"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAA AAA"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAA-_"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAA=A"}]}"#,
        #"{"data": [{"index": 0, "embedding": "AAAAAA\u003d="}]}"#,
        #"{"data": [{"index": 0, "embedding": ""}]}"#,
        #"{"data": [{"index": 0, "embedding": {"a": 1}}]}"#,
        #"{"data": [{"index": 0}]}"#,
        #"{"data": [{"embedding": [0.5]}]}"#,
        #"{"data": [{"index": 1, "embedding": [0.5]}]}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}, {"index": 0, "embedding": [0.5]}]}"#,
        #"{"data": []}"#,
        #"{"data": {"index": 0, "embedding": [0.5]}}"#,
        #"{"data": [[0.5]]}"#,
        #"{"error": {"message": "no"}}"#,
        #"[{"index": 0, "embedding": [0.5]}]"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}]} x"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}]}}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}]"#,
        #"{"data": [{"index": 0, "embedding": [0.5"#,
        #"  {"data":[{"index":0,"embedding":[0.5]}],"x":[true,false,null,{"y":[-1.5e-3,0]}]}  "#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "x": tru}"#,
        #"{"data": [{"index": 0, "embedding": [0.5]}], "x": "tab\there"}"#,
        "{\"data\": [{\"index\": 0, \"embedding\": [0.5]}], \"x\": \"tab\there\"}",
        "",
        "not json",
        "\u{FEFF}{\"data\": [{\"index\": 0, \"embedding\": [0.5]}]}",
    ])
    func unusualAndBrokenAnswersEndAsBefore(_ body: String) {
        let (old, new) = outcomes(body, count: 1)
        #expect(old == new, "\(body)")
    }

    @Test func deepNestingEndsAsBefore() {
        for depth in [10, 63, 64, 65, 200] {
            let nested = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
            let body = #"{"data": [{"index": 0, "embedding": [0.5]}], "x": \#(nested)}"#
            let (old, new) = outcomes(body, count: 1)
            #expect(old == new, "depth \(depth)")
        }
    }

    /// A big answer: the API's largest batch (2,048 inputs) of 1,536 dimensions, compact and with spaces.
    @Test func hugeAnswers() {
        var generator = SplitMix64(seed: 7)
        let vectors = (0..<2_048).map { _ in
            (0..<1_536).map { _ in Float(Int(generator.next() % 2_000_001) - 1_000_000) / 1_048_576 }
        }
        for separator in ["", " \n"] {
            let body = Self.answer(vectors.map { "\"\(Self.base64($0))\"" }, separator: separator)
            let (old, new) = outcomes(body, count: 2_048)
            #expect(old == new)
            #expect(scanned(body, count: 2_048) == vectors.map { $0.map(\.bitPattern) })
        }
    }
}
