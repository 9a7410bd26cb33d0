import Foundation
import SluiceCore
import SluiceTesting
import Testing

@testable import SluiceExtract

/// OpenDocument spreadsheets: Tests/SluiceExtractTests/Fixtures/xz-facts.ods is LibreOffice 7.4's
/// `soffice --headless --convert-to ods` of xz-facts.xlsx (which computed the formula the XLSX left
/// uncomputed), and documents written here for what Calc writes in bulk (repeated rows and cells).
@Suite struct ODSExtractorTests {
    static let fixture = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-facts.ods")

    static func input(_ bytes: [UInt8], name: String = "book.ods", maxTextBytes: Int = 100 << 20) -> ExtractionInput {
        ExtractionInput(
            key: name,
            fileURL: URL(fileURLWithPath: "/tmp/\(name)"),
            bytes: bytes,
            maxTextBytes: maxTextBytes
        )
    }

    @Test func sheetsAsRowsWithTheHeadersNamesLikeXLSX() throws {
        let (extractor, text) = try DocumentSamples.extract(Self.input(Array(try Data(contentsOf: Self.fixture))))
        #expect(extractor == "ods")
        #expect(text.metadata["format"] == "ods")
        #expect(text.metadata["title"] == "XZ Utils facts")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["sheets"] == "Presets, Releases")
        #expect(text.sections.map(\.headingPath) == [["Presets"], ["Releases"]])
        // Row 5 is empty; the 1,048,569 empty rows Calc repeats after row 6 only move the count on.
        #expect(text.sections.map { $0.metadata["lines"] } == ["2-6", "2-4"])
        #expect(
            text.sections.map(\.text) == [
                """
                # Presets

                Preset: -0; Compression memory (MiB): 3; Decompression memory (MiB): 1; Notes: the fastest preset
                Preset: -6; Compression memory (MiB): 94; Decompression memory (MiB): 9; Notes: the default
                Preset: -9; Compression memory (MiB): 674; Decompression memory (MiB): 65
                Preset: total; Decompression memory (MiB): 75
                """,
                """
                # Releases

                Version: 5.0.0; Released: 2010-10-23; Stable: TRUE
                Version: 5.2.0; Released: 2014-12-21; Stable: TRUE
                Version: 5.4.0; Released: 2022-12-13; Stable: TRUE
                """,
            ]
        )
    }

    /// A spreadsheet package around `table`, as Calc writes one.
    static func spreadsheet(_ tables: String) -> [UInt8] {
        var zip = ZIPWriter()
        zip.add("mimetype", "application/vnd.oasis.opendocument.spreadsheet", stored: true)
        zip.add(
            "content.xml",
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" \
            xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" \
            xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet>\
            \(tables)</office:spreadsheet></office:body></office:document-content>
            """
        )
        return zip.finish()
    }

    @Test func repeatedRowsAndCellsCountAsThatMany() throws {
        let bytes = Self.spreadsheet(
            """
            <table:table table:name="Log"><table:table-header-rows><table:table-row>\
            <table:table-cell office:value-type="string"><text:p>Step</text:p></table:table-cell>\
            <table:table-cell table:number-columns-repeated="2"/>\
            <table:table-cell office:value-type="string"><text:p>State</text:p></table:table-cell>\
            </table:table-row></table:table-header-rows>\
            <table:table-row table:number-rows-repeated="2"><table:table-cell office:value-type="string">\
            <text:p>check</text:p></table:table-cell><table:table-cell table:number-columns-repeated="2"/>\
            <table:table-cell office:value-type="boolean" office:boolean-value="true"/></table:table-row>\
            <table:table-row table:number-rows-repeated="1000"><table:table-cell table:number-columns-repeated="1024"/></table:table-row>\
            <table:table-row><table:table-cell office:value-type="float" office:value="7" table:number-columns-repeated="2">\
            <text:p>7</text:p></table:table-cell></table:table-row></table:table>
            """
        )
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes))
        #expect(extractor == "ods")
        #expect(text.sections.map { $0.metadata["lines"] } == ["2-1004"])
        #expect(
            text.sections.first?.text == """
                # Log

                Step: check; State: TRUE
                Step: check; State: TRUE
                Step: 7; column 2: 7
                """
        )
    }

    /// A value repeated across Calc's 16,384 columns in a row repeated a million times would be gigabytes of
    /// text: it fails at the bound before a line of it is laid out.
    @Test func repeatedValuesAreChargedBeforeTheyAreLaidOut() throws {
        let value = String(repeating: "x", count: 1_000)
        let bytes = Self.spreadsheet(
            """
            <table:table table:name="Bomb"><table:table-row><table:table-cell office:value-type="string">\
            <text:p>h</text:p></table:table-cell></table:table-row>\
            <table:table-row table:number-rows-repeated="1048575"><table:table-cell office:value-type="string" \
            table:number-columns-repeated="16384"><text:p>\(value)</text:p></table:table-cell></table:table-row></table:table>
            """
        )
        #expect(bytes.count < 4_000)
        let error = try DocumentSamples.failure(Self.input(bytes, maxTextBytes: 1 << 20))
        #expect(error.code == .textTooLarge, "\(error)")
    }

    @Test func aWorkbookWithoutValuesFailsAsEmpty() throws {
        let bytes = Self.spreadsheet(
            #"<table:table table:name="Empty"><table:table-row><table:table-cell table:number-columns-repeated="3"/></table:table-row></table:table>"#
        )
        let error = try DocumentSamples.failure(Self.input(bytes))
        #expect(error.code == .emptyDocument)
        #expect(error.message.contains("no text"), "\(error.message)")
    }
}
