import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

/// Excel workbooks: Tests/SluiceExtractTests/Fixtures/xz-facts.xlsx, made by scripts/make-samples.sh with
/// openpyxl (inline strings, a date format, a formula without a computed value), and a workbook written
/// here as Excel writes one (shared strings, a 1904 date system, a time, rich text with phonetic guides).
@Suite struct XLSXExtractorTests {
    static let fixture = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-facts.xlsx")

    static func input(_ bytes: [UInt8], name: String = "book.xlsx") -> ExtractionInput {
        ExtractionInput(key: name, fileURL: URL(fileURLWithPath: "/tmp/\(name)"), bytes: bytes)
    }

    @Test func sheetsAsRowsWithTheHeadersNamesDatesAndFormulas() throws {
        let (extractor, text) = try DocumentSamples.extract(Self.input(Array(try Data(contentsOf: Self.fixture))))
        #expect(extractor == "xlsx")
        #expect(text.metadata["format"] == "xlsx")
        #expect(text.metadata["title"] == "XZ Utils facts")
        #expect(text.metadata["author"] == "Lasse Collin")
        #expect(text.metadata["sheets"] == "Presets, Releases")
        #expect(text.sections.map(\.headingPath) == [["Presets"], ["Releases"]])
        #expect(text.sections.map { $0.metadata["lines"] } == ["2-6", "2-4"])
        #expect(
            text.sections.map(\.text) == [
                """
                # Presets

                Preset: -0; Compression memory (MiB): 3; Decompression memory (MiB): 1; Notes: the fastest preset
                Preset: -6; Compression memory (MiB): 94; Decompression memory (MiB): 9; Notes: the default
                Preset: -9; Compression memory (MiB): 674; Decompression memory (MiB): 65
                Preset: total; Decompression memory (MiB): =SUM(C2:C4)
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

    @Test func sharedStringsTimesAndThe1904DateSystem() throws {
        let bytes = try Self.workbook(
            workbook: """
                <workbook xmlns="\(Self.main)" xmlns:r="\(OfficeRelationships.namespace)"><workbookPr date1904="1"/>\
                <sheets><sheet name="Log" sheetId="1" r:id="rId1"/><sheet name="Chart" sheetId="2" r:id="rId9"/></sheets></workbook>
                """,
            sharedStrings: """
                <sst xmlns="\(Self.main)"><si><t>When</t></si><si><t>What</t></si><si><r><t>Tokyo </t></r>\
                <r><rPr><b/></rPr><t>office</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si><si><t>At</t></si></sst>
                """,
            styles: """
                <styleSheet xmlns="\(Self.main)"><numFmts count="1"><numFmt numFmtId="164" formatCode="[$-409]d\\-mmm\\-yyyy;@"/></numFmts>\
                <cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="164"/><xf numFmtId="21"/><xf numFmtId="22"/></cellXfs></styleSheet>
                """,
            sheet: """
                <worksheet xmlns="\(Self.main)"><sheetData>\
                <row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="D1" t="s"><v>3</v></c></row>\
                <row r="3"><c r="A3" s="1"><v>0</v></c><c r="B3" t="s"><v>2</v></c><c r="C3"><v>12.5</v></c><c r="D3" s="2"><v>0.5625</v></c></row>\
                <row r="4"><c r="A4" s="3"><v>41000.75</v></c><c r="B4" t="e"><v>#DIV/0!</v></c><c r="C4" t="b"><v>0</v></c></row>\
                </sheetData></worksheet>
                """
        )
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes))
        #expect(extractor == "xlsx")
        // The chart sheet holds no cells; column C has no header (`column 3`); B1's phonetic guide is left out.
        #expect(text.metadata["sheets"] == "Log")
        #expect(
            text.sections.map(\.text) == [
                """
                # Log

                When: 1904-01-01; What: Tokyo office; column 3: 12.5; At: 13:30:00
                When: 2016-04-02 18:00:00; What: #DIV/0!; column 3: FALSE
                """
            ]
        )
    }

    @Test func serialNumbersAsExcelCountsThem() {
        func date(_ serial: Double, _ kind: SpreadsheetDates.Kind = .date, date1904: Bool = false) -> String? {
            SpreadsheetDates.text(serial: serial, kind: kind, date1904: date1904)
        }
        #expect(date(1) == "1900-01-01")
        #expect(date(59) == "1900-02-28")
        #expect(date(60) == "1900-02-29")  // Lotus 1-2-3's leap day, kept by Excel
        #expect(date(61) == "1900-03-01")
        #expect(date(40474) == "2010-10-23")
        #expect(date(2_958_465) == "9999-12-31")
        #expect(date(2_958_466) == nil && date(-1) == nil)
        #expect(date(0, date1904: true) == "1904-01-01")
        #expect(date(45000.999999, .dateTime) == "2023-03-16 00:00:00")  // 2023-03-15 at 23:59:59.9: the next midnight
        #expect(date(0.75, .time) == "18:00:00")
        #expect(SpreadsheetDates.kind(code: "yyyy-mm-dd") == .date)
        #expect(SpreadsheetDates.kind(code: "mm:ss") == .time)
        #expect(SpreadsheetDates.kind(code: "h:mm AM/PM") == .time)
        #expect(SpreadsheetDates.kind(code: "[h]:mm") == .time)
        #expect(SpreadsheetDates.kind(code: "#,##0.00 \"days\"") == .number)
        #expect(SpreadsheetDates.kind(code: "[Red]0.00") == .number)
        #expect(SpreadsheetDates.kind(code: "General") == .number)
        #expect(SpreadsheetDates.kind(code: "mmmm") == .date)
    }

    @Test func badWorkbooksFailWithAReason() throws {
        let bytes = Array(try Data(contentsOf: Self.fixture))
        var tight = PipelineConfiguration.Extract()
        tight.zip.maxInflatedMB = 0.005
        #expect(try DocumentSamples.failure(Self.input(bytes), configuration: tight).code == .zipBomb)
        let empty = try Self.workbook(
            workbook: """
                <workbook xmlns="\(Self.main)" xmlns:r="\(OfficeRelationships.namespace)"><sheets>\
                <sheet name="Empty" sheetId="1" r:id="rId1"/></sheets></workbook>
                """,
            sheet: "<worksheet xmlns=\"\(Self.main)\"><sheetData><row r=\"1\"/></sheetData></worksheet>"
        )
        #expect(try DocumentSamples.failure(Self.input(empty)).code == .emptyDocument)
        let hostile = try Self.workbook(
            workbook: """
                <workbook xmlns="\(Self.main)" xmlns:r="\(OfficeRelationships.namespace)"><sheets>\
                <sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>
                """,
            sheet: "<!DOCTYPE worksheet [<!ENTITY a \"aaaa\">]><worksheet xmlns=\"\(Self.main)\"/>"
        )
        #expect(try DocumentSamples.failure(Self.input(hostile)).code == .xmlEntities)
    }

    static let main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"

    /// A workbook of one worksheet (`rId1`) and a chart sheet (`rId9`).
    static func workbook(
        workbook: String,
        sharedStrings: String? = nil,
        styles: String? = nil,
        sheet: String
    ) throws
        -> [UInt8]
    {
        let type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
        var relationships = """
            <Relationship Id="rId1" Type="\(type)/worksheet" Target="worksheets/sheet1.xml"/>\
            <Relationship Id="rId9" Type="\(type)/chartsheet" Target="/xl/chartsheets/sheet1.xml"/>
            """
        var parts = ["xl/workbook.xml": workbook, "xl/worksheets/sheet1.xml": sheet]
        if let sharedStrings {
            parts["xl/sharedStrings.xml"] = sharedStrings
            relationships += "<Relationship Id=\"rId2\" Type=\"\(type)/sharedStrings\" Target=\"sharedStrings.xml\"/>"
        }
        if let styles {
            parts["xl/styles.xml"] = styles
            relationships += "<Relationship Id=\"rId3\" Type=\"\(type)/styles\" Target=\"./styles.xml\"/>"
        }
        parts["xl/_rels/workbook.xml.rels"] =
            "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">\(relationships)</Relationships>"
        return try ZIPFixture.archive(parts.sorted { $0.key < $1.key }.map { ($0.key, Data($0.value.utf8)) })
    }
}
