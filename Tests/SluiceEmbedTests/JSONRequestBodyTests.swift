import Foundation
import SluiceHTTP
import Testing

@testable import SluiceEmbed

/// The hand-written request bodies decode to what `JSONSerialization` wrote before: the same fields, and
/// every text byte for byte, whatever it holds.
@Suite struct JSONRequestBodyTests {
    static let texts: [String] = [
        "plain ASCII text",
        "",
        "quotes \" and backslashes \\ and a slash / and \\\" together",
        "lines\nand\r\nwindows\tand tabs\u{08}\u{0C}",
        (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined() + "\u{7F}",
        "ümlaut, 中文, emoji 👩‍👩‍👧, RTL עברית, U+2028 \u{2028} and U+2029 \u{2029}",
        "a byte order mark \u{FEFF} and a NUL \u{0} in the middle",
        String(repeating: "long run without escapes ", count: 2_000) + "\"",
    ]

    static func decoded(_ body: [UInt8]) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
    }

    @Test func stringsRoundTripExactly() throws {
        var body = JSONRequestBody()
        body.append("input", .strings(Self.texts))
        body.append("name", .string("a \"name\"\n"))
        body.append("dimensions", .int(-64))
        body.append("truncate", .bool(false))
        body.append("normalize", .bool(true))
        let object = try Self.decoded(body.body)
        #expect(object["input"] as? [String] == Self.texts)
        #expect(object["name"] as? String == "a \"name\"\n")
        #expect(object["dimensions"] as? Int == -64)
        #expect(object["truncate"] as? Bool == false)
        #expect(object["normalize"] as? Bool == true)
        #expect(object.count == 5)
    }

    @Test func anEmptyBodyIsAnEmptyObject() throws {
        #expect(try Self.decoded(JSONRequestBody().body).isEmpty)
        var body = JSONRequestBody()
        body.append("input", .strings([]))
        #expect(try Self.decoded(body.body)["input"] as? [String] == [])
    }

    @Test(arguments: ["openai", "azure", "ollama", "tei"])
    func dialectsSendTheSameFieldsAsBefore(provider: String) throws {
        var configuration = RemoteEmbedderConfiguration(
            provider: provider,
            baseURL: "http://127.0.0.1:1/v1",
            model: "a-model",
            dimensions: 256
        )
        configuration.requestedDimensions = 256
        let dialect: any EmbeddingDialect =
            switch provider {
            case "ollama": OllamaDialect()
            case "tei": TEIDialect()
            default: OpenAIDialect(azure: provider == "azure")
            }
        let object = try Self.decoded(try dialect.request(for: Self.texts, configuration: configuration).body)
        // What JSONSerialization was given before this body was written by hand.
        var expected: [String: Any]
        switch provider {
        case "ollama":
            expected = ["model": configuration.model, "input": Self.texts, "truncate": false, "dimensions": 256]
        case "tei":
            expected = ["inputs": Self.texts, "truncate": false, "normalize": true]
        default:
            expected = ["input": Self.texts, "encoding_format": configuration.encodingFormat, "dimensions": 256]
            if provider == "openai" { expected["model"] = configuration.model }
        }
        let before = try Self.decoded(Array(try JSONSerialization.data(withJSONObject: expected)))
        #expect(Set(object.keys) == Set(before.keys))
        for (key, value) in before {
            if let texts = value as? [String] {
                #expect(object[key] as? [String] == texts, "\(key)")
            } else if let text = value as? String {
                #expect(object[key] as? String == text, "\(key)")
            } else if let number = value as? NSNumber {
                #expect((object[key] as? NSNumber)?.stringValue == number.stringValue, "\(key)")
            } else {
                Issue.record("\(key): unexpected \(value)")
            }
        }
    }
}
