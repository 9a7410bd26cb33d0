import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The JSONL store's hand-written lines are the bytes `JSONEncoder` wrote before (so stores, exports and
/// journals written by older versions compare equal line for line), for every kind of text, number and
/// metadata value.
@Suite struct JSONLSinkEncodingTests {
    static func reference(_ record: VectorRecord) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(record)
    }

    static let texts: [String] = [
        "", "plain", "a/b \"quoted\" \\ back\\slash", "lines\nand\r\ntabs\t\u{08}\u{0C}",
        (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined() + "\u{7F}",
        "ümlaut, 中文, 👩‍👩‍👧, עברית, \u{2028}\u{2029}\u{FEFF}, e\u{301}",
    ]

    static let floats: [Float] = [
        0, -0.0, 1, -1, 0.1, 1e-5, 1e-7, 123_456_792, 1e20, 16_777_216, 1e16, 1e15, .leastNonzeroMagnitude,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNormalMagnitude, 0.33333334, -2.5,
    ]

    static let doubles: [Double] = [
        0, -0.0, 1, 0.1, 1e-5, 1e-7, 1e15, 1e16, 1e20, 1e300, .leastNonzeroMagnitude, 1.0 / 3, -2.5, 123_456_789,
    ]

    @Test func linesAreWhatJSONEncoderWrote() throws {
        var rng = SplitMix64(seed: 19)
        for round in 0..<300 {
            let text = Self.texts[round % Self.texts.count] + String(round)
            var vector = (0..<64).map { _ in Float(bitPattern: UInt32(truncatingIfNeeded: rng.next())) }
            vector = vector.map { $0.isFinite ? $0 : Float(round) }
            vector[0] = Self.floats[round % Self.floats.count]
            vector[1] = Float.random(in: -1...1, using: &rng)
            let metadata: [String: MetadataValue] = [
                "page": .int(round), "heading_path": .strings(["Intro", Self.texts[(round + 1) % Self.texts.count]]),
                "score": .double(Double(round) / 7), "ocr": .bool(round % 2 == 0),
                "weight": .double(Self.doubles[round % Self.doubles.count]),
                "mtime": .time(Date(timeIntervalSince1970: Double(round) * 86_400.5)),
                "title/é \"\(round)\"": .string(Self.texts[(round + 2) % Self.texts.count]),
                "key10": .string("x"), "key2": .string("y"), "Z": .string("z"), "ä": .strings([]), "é": .int(-1),
                "😀": .string("emoji key"), "_": .bool(true),
            ]
            let record = VectorRecord(
                id: VectorID(rawValue: String(format: "%032x", round)),
                documentKey: "folder/\(Self.texts[(round + 3) % Self.texts.count]).txt",
                ordinal: round - 150,
                text: text,
                vector: vector,
                metadata: round % 5 == 0 ? [:] : metadata
            )
            let line = try JSONLSink.encode(record)
            #expect(line == (try Self.reference(record)), "round \(round): \(String(decoding: line, as: UTF8.self))")
        }
    }

    @Test func aNonFiniteValueIsRefusedAsBefore() {
        let metadataRecord = VectorRecord(
            id: VectorID(rawValue: "0"),
            documentKey: "a.txt",
            ordinal: 0,
            text: "t",
            vector: [1],
            metadata: ["score": .double(.infinity)]
        )
        #expect(throws: EncodingError.self) { try JSONLSink.encode(metadataRecord) }
        let record = VectorRecord(
            id: VectorID(rawValue: "0"),
            documentKey: "a.txt",
            ordinal: 0,
            text: "t",
            vector: [1, .nan]
        )
        #expect(throws: EncodingError.self) { try JSONLSink.encode(record) }
        #expect(throws: EncodingError.self) { try Self.reference(record) }
    }
}
