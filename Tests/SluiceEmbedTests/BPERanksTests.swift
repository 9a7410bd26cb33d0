import Foundation
import Testing

@testable import SluiceEmbed

/// Reading a rank file: every line of the cl100k_base and o200k_base files decodes to the token bytes and rank
/// that Foundation's base64 decoder and `UInt32(_:)` give, and malformed lines are refused.
@Suite struct BPERanksTests {
    static func parse(_ line: String) -> ([UInt8], UInt32)? {
        Array(line.utf8).withUnsafeBytes { BPERanks.parseLine($0) }
    }

    @Test(arguments: ["cl100k_base", "o200k_base"])
    func everyLineDecodesAsFoundationDecodesIt(encoding: String) throws {
        let data = try Data(contentsOf: BPETokenizer.rankFile(encoding))
        var lines = 0
        for line in data.split(separator: 0x0A) where !line.isEmpty {
            let text = String(decoding: line, as: UTF8.self)
            let parts = text.split(separator: " ")
            let expected = try #require(Data(base64Encoded: String(parts[0])))
            let parsed = try #require(Self.parse(text), "\(text)")
            #expect(parsed.0 == [UInt8](expected), "\(text)")
            #expect(parsed.1 == UInt32(parts[1]), "\(text)")
            lines += 1
        }
        #expect(lines > 100_000)
    }

    @Test(arguments: ["", " 1", "IQ== ", "IQ==", "IQ== x", "IQ== -1", "I!== 1", "IQ= 1", "=Q== 1", "IQ== 99999999999"])
    func malformedLinesAreRefused(line: String) {
        #expect(Self.parse(line) == nil)
    }

    @Test func paddingIsDropped() throws {
        #expect(try #require(Self.parse("IQ== 0")).0 == [0x21])
        #expect(try #require(Self.parse("ISE= 7")).0 == [0x21, 0x21])
        #expect(try #require(Self.parse("ISEh 9")) == ([0x21, 0x21, 0x21], 9))
    }
}
