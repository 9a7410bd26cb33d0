import SluiceCore
import SluiceExtract
import SluiceTesting
import Testing

@Suite struct GzipMembersTests {
    /// Text of `count` bytes that compresses but not to nothing (a counter in words).
    static func text(_ count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = 0
        while bytes.count < count {
            bytes += Array("<url><loc>https://example.com/page-\(index)</loc></url>\n".utf8)
            index += 1
        }
        return Array(bytes.prefix(count))
    }

    @Test("one member inflates to its data", arguments: [0, 1, 1_000, 65_536, 65_537, 400_000])
    func oneMember(size: Int) throws {
        let data = Self.text(size)
        #expect(try GzipMembers.inflate(GzipWriter.gzip(data), maxBytes: 1 << 20) == data)
    }

    @Test func membersOneAfterAnotherAreJoined() throws {
        let first = Self.text(70_000)
        let second = Array("<!-- the second member -->".utf8)
        let bytes = GzipWriter.gzip(first) + GzipWriter.gzip(second)
        #expect(try GzipMembers.inflate(bytes, maxBytes: 1 << 20) == first + second)
    }

    @Test func pastTheLimitIsRefusedAtTheLimit() throws {
        // 16 MB of one byte deflates to about 16 KB: refused at the limit, not after inflating it all.
        let bomb = GzipWriter.gzip([UInt8](repeating: 0x20, count: 16 << 20))
        #expect(bomb.count < 40_000)
        let error = try #require(throws: SluiceError.self) { try GzipMembers.inflate(bomb, maxBytes: 1 << 20) }
        #expect(error.code == .tooLarge)
        // Exactly at the limit is accepted.
        let data = Self.text(100_000)
        #expect(try GzipMembers.inflate(GzipWriter.gzip(data), maxBytes: 100_000) == data)
        #expect(throws: SluiceError.self) { try GzipMembers.inflate(GzipWriter.gzip(data), maxBytes: 99_999) }
    }

    @Test func damagedOrCutShortIsMalformed() throws {
        let data = Self.text(50_000)
        let bytes = GzipWriter.gzip(data)
        var cases: [(String, [UInt8])] = [
            ("not gzip", data),
            ("empty", []),
            ("the header alone", Array(bytes.prefix(10))),
            ("cut in the data", Array(bytes.prefix(bytes.count / 2))),
            ("cut in the trailer", Array(bytes.dropLast(3))),
            ("followed by what is not gzip", bytes + Array("trailing".utf8)),
        ]
        var wrongCRC = bytes
        wrongCRC[bytes.count - 8] ^= 0xFF
        cases.append(("a CRC that does not match", wrongCRC))
        var wrongLength = bytes
        wrongLength[bytes.count - 1] ^= 0x01
        cases.append(("a length that does not match", wrongLength))
        for (name, input) in cases {
            let error = try #require(throws: SluiceError.self, "\(name)") {
                try GzipMembers.inflate(input, maxBytes: 1 << 20)
            }
            #expect(error.code == .malformed, "\(name): \(error)")
        }
    }
}
