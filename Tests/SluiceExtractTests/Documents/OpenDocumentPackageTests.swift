import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceExtract

/// Damaged and hostile OpenDocument packages, made from the real fixtures of each kind: each fails alone,
/// with its reason, under the limits every ZIP-based format has (`extract.zip.*`).
@Suite struct OpenDocumentPackageTests {
    static let fixtures = ["odt/xz-lists.odt", "Fixtures/xz-facts.ods", "Fixtures/xz-slides.odp"]

    static func bytes(_ fixture: String) throws -> [UInt8] {
        let url =
            fixture.hasPrefix("Fixtures/")
            ? DocumentSamples.root.deletingLastPathComponent().appendingPathComponent("Tests/SluiceExtractTests")
                .appendingPathComponent(fixture)
            : DocumentSamples.root.appendingPathComponent(fixture)
        return Array(try Data(contentsOf: url))
    }

    static func input(_ bytes: [UInt8], name: String) -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
    }

    /// The package with its parts changed (nil drops a part), written again with its `mimetype` entry first
    /// and stored, as the specification asks (so that it is still recognised).
    static func repackaged(_ bytes: [UInt8], _ change: (String, Data) -> Data?) throws -> [UInt8] {
        var zip = ZIPWriter()
        for part in try ZIPFixture.parts(of: bytes) {
            guard let data = change(part.name, part.data) else { continue }
            zip.add(part.name, Array(data), stored: part.name == "mimetype")
        }
        return zip.finish()
    }

    static func format(_ fixture: String) -> String { String(fixture.split(separator: ".").last!) }

    @Test(arguments: fixtures)
    func repackagedUnchangedItStillReads(_ fixture: String) throws {
        let same = try Self.repackaged(try Self.bytes(fixture)) { _, data in data }
        let (extractor, text) = try DocumentSamples.extract(Self.input(same, name: "x"))
        #expect(extractor == Self.format(fixture))
        #expect(!text.sections.isEmpty)
    }

    @Test(arguments: fixtures)
    func aTruncatedPackageFailsAsMalformed(_ fixture: String) throws {
        let bytes = try Self.bytes(fixture)
        let error = try DocumentSamples.failure(Self.input(Array(bytes.prefix(bytes.count / 2)), name: "cut"))
        #expect(error.code == .malformed, "\(error)")
    }

    @Test(arguments: fixtures)
    func aPackageWithoutContentFailsSayingSo(_ fixture: String) throws {
        let bytes = try Self.repackaged(try Self.bytes(fixture)) { name, data in name == "content.xml" ? nil : data }
        let error = try DocumentSamples.failure(Self.input(bytes, name: "no-content"))
        #expect(error.code == .malformed, "\(error)")
        #expect(error.message.contains("no content.xml"), "\(error.message)")
    }

    /// "Billion laughs" in content.xml or meta.xml: refused before libxml2 parses it, nothing expanded.
    @Test(arguments: fixtures, ["content.xml", "meta.xml"])
    func entityExpansionIsRefused(_ fixture: String, part: String) throws {
        let entities =
            #"<!ENTITY lol "lol">"#
            + (1...9).map {
                #"<!ENTITY lol\#($0) ""# + String(repeating: $0 == 1 ? "&lol;" : "&lol\($0 - 1);", count: 10) + #"">"#
            }
            .joined()
        let bytes = try Self.repackaged(try Self.bytes(fixture)) { name, data in
            guard name == part else { return data }
            let text = String(decoding: data, as: UTF8.self)
            let root = text.range(of: "<office:")!.lowerBound
            return Data((text[..<root] + "<!DOCTYPE office:document [\(entities)]>" + text[root...]).utf8)
        }
        let error = try DocumentSamples.failure(Self.input(bytes, name: "bomb"))
        #expect(error.code == .xmlEntities, "\(error)")
        #expect(error.message.contains(part), "\(error.message)")
    }

    /// content.xml padded with 4 MiB of spaces inflates far past extract.zip.max_compression_ratio.
    @Test(arguments: fixtures)
    func aZipBombFailsAtTheRatio(_ fixture: String) throws {
        let bytes = try Self.repackaged(try Self.bytes(fixture)) { name, data in
            guard name == "content.xml" else { return data }
            var text = String(decoding: data, as: UTF8.self)
            let end = text.range(of: "</office:body>")!.lowerBound
            text.insert(contentsOf: String(repeating: " ", count: 4 << 20), at: end)
            return Data(text.utf8)
        }
        #expect(bytes.count < 200_000)
        let error = try DocumentSamples.failure(Self.input(bytes, name: "bomb"))
        #expect(error.code == .zipBomb, "\(error)")
        #expect(error.message.contains("extract.zip.max_compression_ratio"), "\(error.message)")
    }

    /// The package's limits are `extract.zip.*`, as for DOCX, PPTX, XLSX and EPUB.
    @Test(arguments: fixtures)
    func theZIPLimitsHold(_ fixture: String) throws {
        var tight = PipelineConfiguration.Extract()
        tight.zip.maxInflatedMB = 0.01
        let error = try DocumentSamples.failure(Self.input(try Self.bytes(fixture), name: "x"), configuration: tight)
        #expect(error.code == .zipBomb, "\(error)")
        #expect(error.message.contains("extract.zip.max_inflated_mb"), "\(error.message)")
    }
}
