/// Documents that turn a little stored text into a great deal of produced text, as the second bad-input
/// campaign found (issue 37): a reader multiplies what a file names by reference (one shared string named
/// by every cell, a slide or chapter listed again and again), or repeats a header, a key or a run before
/// every value. Each is small on disk and passes the zip-bomb limits, which count inflated bytes; only a
/// bound on the text produced (`extract.max_text_mb`) stops it. Generated in code, so no large file is
/// committed: the tests of every reader and the fault campaign make them as they need them.
package enum HostileDocuments {
    /// One generated document.
    package struct Document: Sendable, CustomStringConvertible {
        /// What it does, for test names.
        package var label: String
        /// A file name whose extension is the format's.
        package var name: String
        package var bytes: [UInt8]
        /// About how many bytes of text a reader without a bound would produce from it.
        package var producedBytes: Int

        package var description: String { label }
    }

    /// Words drawn from a small vocabulary, separated by spaces: text that compresses about four times, as
    /// prose does (a run of one character would trip the compression-ratio limit before any text is made).
    /// Letters and spaces only, so it is safe in XML, CSV and JSON.
    package static func prose(bytes: Int, seed: UInt64 = 0x37) -> String {
        let words = [
            "river", "stone", "lantern", "harbour", "meadow", "copper", "whisper", "orchard", "thunder", "velvet",
            "glacier", "compass", "ember", "willow", "saffron", "quarry", "falcon", "marble", "tide", "cedar",
            "beacon", "hollow", "prism", "canyon", "juniper", "anchor", "fable", "summit", "ripple", "thistle",
            "mosaic", "bramble",
        ]
        var rng = SplitMix64(seed: seed)
        var text = ""
        text.reserveCapacity(bytes + 16)
        while text.utf8.count < bytes {
            if !text.isEmpty { text += " " }
            text += words[Int(rng.next() % UInt64(words.count))]
        }
        return String(text.prefix(bytes))
    }

    // MARK: Excel

    private static let spreadsheetML = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    private static let relationshipTypes = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    private static let packageRelationships = "http://schemas.openxmlformats.org/package/2006/relationships"

    /// A workbook of one sheet: `sheetData` inside, shared strings if any.
    private static func workbook(sheetData: String, sharedStrings: [String] = []) -> [UInt8] {
        var zip = ZIPWriter()
        zip.add(
            "xl/workbook.xml",
            "<workbook xmlns=\"\(spreadsheetML)\" xmlns:r=\"\(relationshipTypes)\"><sheets>"
                + "<sheet name=\"Data\" sheetId=\"1\" r:id=\"rId1\"/></sheets></workbook>"
        )
        var relationships =
            "<Relationship Id=\"rId1\" Type=\"\(relationshipTypes)/worksheet\" Target=\"worksheets/sheet1.xml\"/>"
        if !sharedStrings.isEmpty {
            relationships +=
                "<Relationship Id=\"rId2\" Type=\"\(relationshipTypes)/sharedStrings\" Target=\"sharedStrings.xml\"/>"
            zip.add(
                "xl/sharedStrings.xml",
                "<sst xmlns=\"\(spreadsheetML)\">" + sharedStrings.map { "<si><t>\($0)</t></si>" }.joined() + "</sst>"
            )
        }
        zip.add(
            "xl/_rels/workbook.xml.rels",
            "<Relationships xmlns=\"\(packageRelationships)\">\(relationships)</Relationships>"
        )
        zip.add(
            "xl/worksheets/sheet1.xml",
            "<worksheet xmlns=\"\(spreadsheetML)\"><sheetData>\(sheetData)</sheetData></worksheet>"
        )
        return zip.finish()
    }

    /// An XLSX whose `cells` cells (one a row, under a header `value`) all name one shared string of
    /// `stringBytes`: the campaign's 120 KB file that became 535,185 vectors (512 KB, 1,000 cells).
    package static func xlsxSharedString(stringBytes: Int = 512 << 10, cells: Int = 1_000) -> Document {
        var rows = "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>value</t></is></c></row>"
        for row in 2...(cells + 1) { rows += "<row r=\"\(row)\"><c r=\"A\(row)\" t=\"s\"><v>0</v></c></row>" }
        return Document(
            label: "XLSX: one shared string named by every cell",
            name: "shared-string.xlsx",
            bytes: workbook(sheetData: rows, sharedStrings: [prose(bytes: stringBytes)]),
            producedBytes: cells * (stringBytes + 7)
        )
    }

    /// An XLSX whose first row is one header of `headerBytes` (an inline string: no shared strings), then
    /// `rows` rows of one number each, every one written after the header's name: the campaign's 117 KB file
    /// that became 53,574 vectors (512 KB, 100 rows).
    package static func xlsxRepeatedHeader(headerBytes: Int = 512 << 10, rows: Int = 100) -> Document {
        var sheet = "<row r=\"1\"><c r=\"A1\" t=\"inlineStr\"><is><t>\(prose(bytes: headerBytes))</t></is></c></row>"
        for row in 2...(rows + 1) { sheet += "<row r=\"\(row)\"><c r=\"A\(row)\"><v>\(row)</v></c></row>" }
        return Document(
            label: "XLSX: a huge header repeated before every value",
            name: "repeated-header.xlsx",
            bytes: workbook(sheetData: sheet),
            producedBytes: rows * (headerBytes + 8)
        )
    }

    /// An XLSX of `rows` rows of two small numbers (no `r` attributes): little text, but a tree of millions
    /// of nodes if the sheet is parsed whole (the campaign's million-row sheet peaked at 1.1 GB).
    package static func xlsxManyRows(_ rows: Int = 1_000_000) -> Document {
        var sheet = "<row><c t=\"inlineStr\"><is><t>n</t></is></c><c t=\"inlineStr\"><is><t>m</t></is></c></row>"
        sheet.reserveCapacity(rows * 40)
        for row in 1..<rows { sheet += "<row><c><v>\(row)</v></c><c><v>\(row % 7)</v></c></row>" }
        return Document(
            label: "XLSX: a million rows",
            name: "many-rows.xlsx",
            bytes: workbook(sheetData: sheet),
            producedBytes: rows * 14
        )
    }

    // MARK: PowerPoint, Word, EPUB

    /// A PPTX whose presentation lists one slide of `slideBytes` of text `times` times.
    package static func pptxRepeatedSlide(slideBytes: Int = 512 << 10, times: Int = 100) -> Document {
        let presentationML = "http://schemas.openxmlformats.org/presentationml/2006/main"
        let drawingML = "http://schemas.openxmlformats.org/drawingml/2006/main"
        var zip = ZIPWriter()
        let ids = (0..<times).map { "<p:sldId id=\"\(256 + $0)\" r:id=\"rId1\"/>" }.joined()
        zip.add(
            "ppt/presentation.xml",
            "<p:presentation xmlns:p=\"\(presentationML)\" xmlns:r=\"\(relationshipTypes)\"><p:sldIdLst>\(ids)</p:sldIdLst></p:presentation>"
        )
        zip.add(
            "ppt/_rels/presentation.xml.rels",
            "<Relationships xmlns=\"\(packageRelationships)\"><Relationship Id=\"rId1\" Type=\"\(relationshipTypes)/slide\" Target=\"slides/slide1.xml\"/></Relationships>"
        )
        zip.add(
            "ppt/slides/slide1.xml",
            "<p:sld xmlns:p=\"\(presentationML)\" xmlns:a=\"\(drawingML)\"><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>"
                + prose(bytes: slideBytes) + "</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
        )
        return Document(
            label: "PPTX: one slide listed again and again",
            name: "repeated-slide.pptx",
            bytes: zip.finish(),
            producedBytes: times * slideBytes
        )
    }

    /// A DOCX of `paragraphs` copies of one paragraph of `paragraphBytes`: a huge repeated run, which
    /// deflate stores in a few bytes a copy (under the compression-ratio limit).
    package static func docxRepeatedRuns(paragraphBytes: Int = 4_096, paragraphs: Int = 10_000) -> Document {
        let wordML = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
        let paragraph = "<w:p><w:r><w:t>\(prose(bytes: paragraphBytes))</w:t></w:r></w:p>"
        var body = ""
        body.reserveCapacity(paragraphs * paragraph.utf8.count + 256)
        for _ in 0..<paragraphs { body += paragraph }
        var zip = ZIPWriter()
        zip.add("word/document.xml", "<w:document xmlns:w=\"\(wordML)\"><w:body>\(body)</w:body></w:document>")
        return Document(
            label: "DOCX: one run repeated in every paragraph",
            name: "repeated-runs.docx",
            bytes: zip.finish(),
            producedBytes: paragraphs * (paragraphBytes + 2)
        )
    }

    /// An EPUB whose spine lists one chapter of `chapterBytes` of text `times` times.
    package static func epubRepeatedChapter(chapterBytes: Int = 512 << 10, times: Int = 100) -> Document {
        var zip = ZIPWriter()
        zip.add("mimetype", "application/epub+zip", stored: true)
        zip.add(
            "META-INF/container.xml",
            "<container xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\" version=\"1.0\"><rootfiles>"
                + "<rootfile full-path=\"OEBPS/book.opf\" media-type=\"application/oebps-package+xml\"/></rootfiles></container>"
        )
        let spine = String(repeating: "<itemref idref=\"c1\"/>", count: times)
        zip.add(
            "OEBPS/book.opf",
            "<package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\"><metadata/><manifest>"
                + "<item id=\"c1\" href=\"c1.xhtml\" media-type=\"application/xhtml+xml\"/></manifest>"
                + "<spine>\(spine)</spine></package>"
        )
        zip.add(
            "OEBPS/c1.xhtml",
            "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><p>\(prose(bytes: chapterBytes))</p></body></html>"
        )
        return Document(
            label: "EPUB: one chapter listed again and again in the spine",
            name: "repeated-chapter.epub",
            bytes: zip.finish(),
            producedBytes: times * chapterBytes
        )
    }

    // MARK: Text formats

    /// A CSV whose header is one name of `headerBytes`, then `rows` rows of one value each: the header is
    /// written before every value.
    package static func csvRepeatedHeader(headerBytes: Int = 512 << 10, rows: Int = 100) -> Document {
        var text = prose(bytes: headerBytes) + "\n"
        for row in 1...rows { text += "\(row)\n" }
        return Document(
            label: "CSV: a huge header repeated before every value",
            name: "repeated-header.csv",
            bytes: Array(text.utf8),
            producedBytes: rows * (headerBytes + 6)
        )
    }

    /// A JSON object whose one key of `keyBytes` holds `values` strings: the key is in the path written
    /// before every value.
    package static func jsonRepeatedKey(keyBytes: Int = 512 << 10, values: Int = 100) -> Document {
        let numbers = (1...values).map { "\"v\($0)\"" }.joined(separator: ", ")
        return Document(
            label: "JSON: a huge key in the path of every value",
            name: "repeated-key.json",
            bytes: Array("{\"\(prose(bytes: keyBytes))\": [\(numbers)]}".utf8),
            // The line's path, and the record's heading path (the container's and the record's own).
            producedBytes: values * (3 * keyBytes + 24)
        )
    }

    /// A Markdown document whose one heading of `headingBytes` stands over `bodyBytes` of text in short
    /// paragraphs: within the bound as text, but every chunk of the section carries the heading in its
    /// record (a thousand chunks of a 256 KB heading store 256 MB).
    package static func markdownHugeHeading(headingBytes: Int = 256 << 10, bodyBytes: Int = 1 << 20) -> Document {
        var text = "# " + prose(bytes: headingBytes) + "\n\n"
        let paragraph = prose(bytes: 400, seed: 0x38)
        while text.utf8.count < headingBytes + bodyBytes { text += paragraph + "\n\n" }
        return Document(
            label: "Markdown: a huge heading over every chunk",
            name: "huge-heading.md",
            bytes: Array(text.utf8),
            producedBytes: (bodyBytes / 400) * headingBytes
        )
    }

    /// One of each, sized so that each would produce over 32 MB of text (the default `extract.max_text_mb`)
    /// from a file of at most a few hundred KB.
    package static func all() -> [Document] {
        [
            xlsxSharedString(), xlsxRepeatedHeader(), pptxRepeatedSlide(), docxRepeatedRuns(), epubRepeatedChapter(),
            csvRepeatedHeader(), jsonRepeatedKey(), markdownHugeHeading(),
        ]
    }
}
