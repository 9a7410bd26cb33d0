import Foundation
import SluiceCore
import SluiceLMDB
import SluiceTesting
import Testing

@testable import SluiceSinks

/// The local store's record layouts (`LocalRecordLayout.swift`): the binary one written now, the JSON one
/// of older stores read still, both in one store, and what is refused.
@Suite struct LocalRecordLayoutTests {
    static let record = VectorRecord(
        id: VectorID(rawValue: "doc.txt#3"),
        documentKey: "folder/déjà vu.txt",
        ordinal: 3,
        text: "Zürich\n\"quoted\" text, emoji 🦀 and a NUL \u{0} inside",
        vector: [0.25, -1.5, 3e-8, .greatestFiniteMagnitude],
        metadata: [
            "title": .string("Déjà vu"),
            "page": .int(-42),
            "big": .int(.max),
            "score": .double(0.1),
            "whole": .double(2.0),
            "flag": .bool(true),
            "off": .bool(false),
            "modified": .time(Date(timeIntervalSince1970: 1_700_000_000)),
            "early": .time(Date(timeIntervalSince1970: -86_401)),
            "headings": .strings(["Intro", "", "Teil 2"]),
            "looks-like-a-time": .string("2024-01-02T03:04:05Z"),
            "empty": .strings([]),
        ]
    )

    @Test("the document key alone is read from either layout (the adoption's scan for keys)")
    func documentKeyOfEitherLayout() throws {
        let vectorEnd = 4 + Self.record.vector.count * 4
        for encoded in [LocalSink.encode(Self.record), try LocalSink.encodeJSON(Self.record)] {
            let key = try encoded.withUnsafeBytes { raw in
                try LocalRecordLayout.documentKey(UnsafeRawBufferPointer(rebasing: raw[vectorEnd...]), record: "r")
            }
            #expect(key == Self.record.documentKey)
        }
        let unknown: [UInt8] = [9, 1, 2]
        #expect(throws: SluiceError.self) {
            try unknown.withUnsafeBytes { try LocalRecordLayout.documentKey($0, record: "r") }
        }
    }

    @Test("one metadata value alone is read from either layout as the whole decode reads it (the access table's pass)")
    func metadataValueOfEitherLayout() throws {
        let vectorEnd = 4 + Self.record.vector.count * 4
        for encoded in [LocalSink.encode(Self.record), try LocalSink.encodeJSON(Self.record)] {
            let whole = try LocalSink.decode(id: Array(Self.record.id.rawValue.utf8), encoded).metadata
            for name in Array(Self.record.metadata.keys) + ["absent", "", "zzz", "headingsx", "a"] {
                let value = try encoded.withUnsafeBytes { raw in
                    try LocalRecordLayout.metadataValue(
                        named: name,
                        in: UnsafeRawBufferPointer(rebasing: raw[vectorEnd...]),
                        record: "r"
                    )
                }
                #expect(value == whole[name], "\(name)")
            }
        }
        // Cut inside the text or before the value: refused, never read past the end.
        let encoded = LocalSink.encode(Self.record)
        for (cut, name) in [(vectorEnd + 3, "title"), (vectorEnd + 40, "title"), (encoded.count - 2, "whole")] {
            let bytes = Array(encoded[vectorEnd..<cut])
            #expect(throws: SluiceError.self) {
                try bytes.withUnsafeBytes { try LocalRecordLayout.metadataValue(named: name, in: $0, record: "r") }
            }
        }
    }

    @Test("the binary layout gives back every field and value as written, and starts with its version")
    func binaryRoundTrip() throws {
        let encoded = LocalSink.encode(Self.record)
        #expect(encoded[4 + Self.record.vector.count * 4] == LocalRecordLayout.binaryVersion)
        let decoded = try LocalSink.decode(id: Array(Self.record.id.rawValue.utf8), encoded)
        #expect(decoded == Self.record)
        // Kept as written: JSON read these back as an integer and a time.
        #expect(decoded.metadata["whole"] == .double(2.0))
        #expect(decoded.metadata["looks-like-a-time"] == .string("2024-01-02T03:04:05Z"))
    }

    @Test("a time is kept to the second, as in the JSON layout")
    func timeToTheSecond() throws {
        var record = Self.record
        record.metadata = [
            "at": .time(Date(timeIntervalSince1970: 1_700_000_000.75)),
            "before": .time(Date(timeIntervalSince1970: -0.5)),
        ]
        let binary = try LocalSink.decode(id: [], LocalSink.encode(record))
        let json = try LocalSink.decode(id: [], LocalSink.encodeJSON(record))
        #expect(binary.metadata["at"] == .time(Date(timeIntervalSince1970: 1_700_000_000)))
        #expect(binary.metadata["before"] == .time(Date(timeIntervalSince1970: -1)))
        #expect(binary.metadata == json.metadata)
    }

    @Test("a value in the JSON layout of older stores is still read")
    func jsonLayoutRead() throws {
        let encoded = try LocalSink.encodeJSON(Self.record)
        #expect(encoded[4 + Self.record.vector.count * 4] == UInt8(ascii: "{"))
        let decoded = try LocalSink.decode(id: Array(Self.record.id.rawValue.utf8), encoded)
        #expect(decoded.text == Self.record.text)
        #expect(decoded.documentKey == Self.record.documentKey)
        #expect(decoded.vector == Self.record.vector)
        #expect(decoded.metadata["page"] == .int(-42))
        #expect(decoded.metadata["headings"] == .strings(["Intro", "", "Teil 2"]))
    }

    @Test(
        "an unknown layout and a cut or padded binary value are refused as sinkFailed",
        arguments: [
            { (bytes: inout [UInt8], fields: Int) in bytes[fields] = 3 },
            { (bytes: inout [UInt8], fields: Int) in bytes.removeLast() },
            { (bytes: inout [UInt8], fields: Int) in bytes.removeLast(bytes.count - fields - 2) },
            { (bytes: inout [UInt8], fields: Int) in bytes.append(0) },
            { (bytes: inout [UInt8], fields: Int) in bytes.removeLast(bytes.count - fields) },
        ] as [@Sendable (inout [UInt8], Int) -> Void]
    )
    func refused(damage: @Sendable (inout [UInt8], Int) -> Void) throws {
        var bytes = LocalSink.encode(Self.record)
        damage(&bytes, 4 + Self.record.vector.count * 4)
        let error = #expect(throws: SluiceError.self) { try LocalSink.decode(id: [], bytes) }
        #expect(error?.code == .sinkFailed)
    }

    @Test("a store holding records of both layouts searches, exports and replaces them alike")
    func bothLayoutsInOneStore() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(
            "local-layout-\(UInt64.random(in: 0...UInt64.max))"
        )
        defer { TemporaryDirectory.remove(dir) }
        let record = VectorRecord.onPageOne
        let old = record("old", "written by an older Sluice", [1, 0])
        do {
            // What an older Sluice wrote: the JSON layout.
            let environment = try LMDBEnvironment(path: dir, mapSize: 1 << 26)
            let vectors = try environment.database("vectors")
            _ = try environment.database("meta")
            try environment.write { txn in
                try txn.put(vectors, Array(old.id.rawValue.utf8), try LocalSink.encodeJSON(old))
            }
        }
        let sink = try LocalSink(directory: dir)
        let new = record("new", "written now", [0, 1])
        try await sink.upsert([new])
        let collector = ExportCollector()
        try await sink.exportAll { collector.append($0) }
        let exported = collector.records
        #expect(Set(exported.map(\.id.rawValue)) == ["old", "new"])
        #expect(exported.first { $0.id.rawValue == "old" } == old)
        #expect(exported.first { $0.id.rawValue == "new" } == new)
        let nearOld = try await sink.search(
            SearchRequest(vector: [1, 0.1], k: 1, filter: try SearchFilter(parsing: "page = 1"))
        )
        #expect(nearOld.map(\.record.id.rawValue) == ["old"])
        let keyword = try await sink.search(SearchRequest(mode: .keyword, text: "older", k: 2))
        #expect(keyword.map(\.record.id.rawValue) == ["old"])
        // Replaced, the old record is written in the binary layout.
        try await sink.upsert([record("old", "rewritten", [1, 0])])
        let vectors = try sink.environment.database("vectors")
        let value = try sink.environment.read { try $0.get(vectors, Array("old".utf8)) }
        #expect(value?[4 + 2 * 4] == LocalRecordLayout.binaryVersion)
    }
}
