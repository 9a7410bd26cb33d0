import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local store's records read as untrusted bytes (`LocalRecordLayout.swift`): hostile fields throw
/// `sinkFailed` naming the record, never trap and never allocate by a length they claim; random records
/// round-trip; every strict prefix and random damage of a valid record throws or decodes, never traps.
@Suite struct LocalRecordLayoutHostileTests {
    /// A record of id `rec-7` with a one-dimensional vector and `fields` after it.
    static func value(_ fields: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [1, 0, 0, 0]
        withUnsafeBytes(of: Float(1).bitPattern.littleEndian) { bytes += $0 }
        return bytes + fields
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var out: [UInt8] = []
        LocalRecordLayout.appendVarint(value, to: &out)
        return out
    }

    /// Version 2, key "k", ordinal 0, text "t", then `rest` (the metadata count and entries).
    static func binary(_ rest: [UInt8]) -> [UInt8] { [2, 1, 0x6B, 0, 1, 0x74] + rest }

    static let hostile: [(String, [UInt8])] = [
        ("a truncated varint", [2, 0x80]),
        ("a varint of eleven bytes", [2] + [UInt8](repeating: 0xFF, count: 10) + [1]),
        ("a tenth varint byte past 64 bits", [2] + [UInt8](repeating: 0xFF, count: 9) + [2]),
        ("a length past the end", [2, 5, 0x61]),
        ("a length of 2^60", [2] + varint(1 << 60) + [0x61]),
        ("a metadata count of 2^60", binary(varint(1 << 60))),
        ("a metadata count past the bytes", binary([3, 1, 0x61, 3, 1])),
        ("a list of 2^60 strings", binary([1, 1, 0x61, 5] + varint(1 << 60))),
        ("an unknown tag", binary([1, 1, 0x61, 9, 0])),
        ("a boolean that is not 0 or 1", binary([1, 1, 0x61, 3, 2])),
        ("a double cut short", binary([1, 1, 0x61, 2, 0, 0, 0])),
        ("a key twice", binary([2, 1, 0x61, 3, 1, 1, 0x61, 3, 0])),
        ("keys out of order", binary([2, 1, 0x62, 3, 1, 1, 0x61, 3, 0])),
        ("invalid UTF-8 in the key", [2, 2, 0xC3, 0x28, 0, 0, 0]),
        ("invalid UTF-8 in a value", binary([1, 1, 0x61, 0, 1, 0xFF])),
        ("a lone surrogate's bytes", [2, 3, 0xED, 0xA0, 0x80, 0, 0, 0]),
        ("bytes left over", binary([0, 0])),
        ("a wrong version byte", [7] + binary([0]).dropFirst()),
        ("no fields at all", []),
        ("JSON that is not a record", Array(#"{"key": 3}"#.utf8)),
        ("JSON cut short", Array(#"{"key": "a", "ordi"#.utf8)),
    ]

    @Test("hostile fields throw sinkFailed naming the record", arguments: hostile)
    func hostileFields(what: String, fields: [UInt8]) {
        let error = #expect(throws: SluiceError.self, "\(what)") {
            try LocalSink.decode(id: Array("rec-7".utf8), Self.value(fields))
        }
        #expect(error?.code == .sinkFailed, "\(what)")
        #expect(error?.message.contains("corrupt record rec-7") == true, "\(what): \(error?.message ?? "")")
        if fields.first == 2 || fields.first == UInt8(ascii: "{") {
            // The adoption's scan reads the key alone: it refuses what it reads of the same bytes.
            let keyOnly = Result {
                try Self.value(fields).withUnsafeBytes {
                    try LocalRecordLayout.documentKey(UnsafeRawBufferPointer(rebasing: $0[8...]), record: "rec-7")
                }
            }
            if case .failure(let failure) = keyOnly {
                #expect((failure as? SluiceError)?.message.contains("rec-7") == true, "\(what)")
            }
        }
    }

    @Test("a vector header past the end throws naming the record")
    func vectorPastTheEnd() {
        for bytes in [[1, 0], [0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0], [2, 0, 0, 0, 0, 0, 0, 0]] as [[UInt8]] {
            let error = #expect(throws: SluiceError.self) { try LocalSink.decode(id: Array("rec-7".utf8), bytes) }
            #expect(error?.message.contains("rec-7") == true)
        }
    }

    static func randomText(_ random: inout SplitMix64) -> String {
        let alphabet: [Unicode.Scalar] = [
            "a", "Z", "0", " ", "\n", "\"", "\\", "\u{0}", "é", "ß", "€", "🦀", "\u{301}", "ァ",
        ]
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...12, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
        return String(scalars)
    }

    static func randomValue(_ random: inout SplitMix64) -> MetadataValue {
        switch Int.random(in: 0...5, using: &random) {
        case 0: .string(randomText(&random))
        case 1: .int(Int(bitPattern: UInt(random.next())) >> Int.random(in: 0...63, using: &random))
        case 2:
            .double(
                [0, -0.0, .infinity, -.greatestFiniteMagnitude, .leastNonzeroMagnitude, 1e300].randomElement(
                    using: &random
                )! + Double.random(in: -1e6...1e6, using: &random)
            )
        case 3: .bool(Bool.random(using: &random))
        case 4:
            .time(Date(timeIntervalSince1970: Double(Int64.random(in: -4_000_000_000...8_000_000_000, using: &random))))
        default: .strings((0..<Int.random(in: 0...4, using: &random)).map { _ in randomText(&random) })
        }
    }

    static func randomRecord(_ random: inout SplitMix64) -> VectorRecord {
        var metadata: [String: MetadataValue] = [:]
        for _ in 0..<Int.random(in: 0...8, using: &random) { metadata[randomText(&random)] = randomValue(&random) }
        return VectorRecord(
            id: VectorID(rawValue: "r"),
            documentKey: randomText(&random),
            ordinal: Int.random(in: Int.min...Int.max, using: &random),
            text: randomText(&random),
            vector: (0..<Int.random(in: 0...4, using: &random)).map { _ in Float.random(in: -2...2, using: &random) },
            metadata: metadata
        )
    }

    @Test("random records round-trip through the binary layout; every strict prefix of one is refused")
    func randomRoundTrips() throws {
        var random = SplitMix64(seed: 0x1A70_0017)
        for _ in 0..<300 {
            let record = Self.randomRecord(&random)
            let encoded = LocalSink.encode(record)
            #expect(try LocalSink.decode(id: Array("r".utf8), encoded) == record)
            let fieldsStart = 4 + record.vector.count * 4
            for end in fieldsStart..<encoded.count {
                #expect(throws: SluiceError.self) { try LocalSink.decode(id: Array("r".utf8), encoded[..<end]) }
            }
        }
    }

    @Test("random damage to a valid record throws sinkFailed or decodes and round-trips, never traps")
    func randomDamage() {
        var random = SplitMix64(seed: 0xDA_4A6E)
        for _ in 0..<2_000 {
            var bytes = LocalSink.encode(Self.randomRecord(&random))
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let index = Int.random(in: 4..<max(5, bytes.count), using: &random)
                if index < bytes.count { bytes[index] = UInt8.random(in: 0...255, using: &random) }
            }
            do {
                // What decodes re-encodes to bytes that decode and encode the same (the fuzz target's check).
                let decoded = try LocalSink.decode(id: Array("r".utf8), bytes)
                let encoded = LocalSink.encode(decoded)
                #expect(LocalSink.encode(try LocalSink.decode(id: Array("r".utf8), encoded)) == encoded)
            } catch {
                #expect((error as? SluiceError)?.code == .sinkFailed)
            }
        }
    }
}
