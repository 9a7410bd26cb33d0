import Foundation
import SluiceCore
import Testing

@testable import SluiceExtract

/// RTF: samples/rtf/xz-lists.rtf (LibreOffice 7.4's `soffice --headless --convert-to rtf` of
/// samples/docx/xz-lists.docx) must read as the DOCX it came from; Tests/SluiceExtractTests/Fixtures/
/// xz-notes.rtf (the same conversion of a pandoc DOCX, scripts/make-samples.sh) has `\info`, a footnote and
/// `\uN` text in four scripts; the rest is written here, for what other writers do.
@Suite struct RTFExtractorTests {
    static let notes = DocumentSamples.root.deletingLastPathComponent()
        .appendingPathComponent("Tests/SluiceExtractTests/Fixtures/xz-notes.rtf")

    static func input(_ rtf: String, name: String = "doc.rtf", maxTextBytes: Int = 100 << 20) -> ExtractionInput {
        input(Array(rtf.utf8), name: name, maxTextBytes: maxTextBytes)
    }

    static func input(_ bytes: [UInt8], name: String = "doc.rtf", maxTextBytes: Int = 100 << 20) -> ExtractionInput {
        ExtractionInput(
            key: name,
            fileURL: URL(fileURLWithPath: "/tmp/\(name)"),
            bytes: bytes,
            maxTextBytes: maxTextBytes
        )
    }

    static func text(_ rtf: String) throws -> ExtractedText {
        let (extractor, text) = try DocumentSamples.extract(input(rtf))
        #expect(extractor == "rtf")
        return text
    }

    @Test func headingsListsAndTablesAsTheDOCXTheyCameFrom() throws {
        let (extractor, text) = try DocumentSamples.extract("rtf/xz-lists.rtf")
        #expect(extractor == "rtf")
        #expect(text.metadata["format"] == "rtf")
        let docx = try DocumentSamples.extract("docx/xz-lists.docx").text
        #expect(text.sections.map(\.headingPath) == docx.sections.map(\.headingPath))
        #expect(text.sections.map(\.text) == docx.sections.map(\.text))
    }

    @Test func infoFootnotesAndUnicodeOfARealDocument() throws {
        let bytes = Array(try Data(contentsOf: Self.notes))
        let (extractor, text) = try DocumentSamples.extract(Self.input(bytes, name: "notes.txt"))
        #expect(extractor == "rtf")
        #expect(text.metadata["title"] == "XZ Utils notes")
        #expect(text.metadata["author"] == "Lasse Collin")
        // The title and author paragraphs come first, without a heading, as the DOCX reads.
        #expect(text.sections[0].text == "XZ Utils notes\n\nLasse Collin", "\(text.sections[0].text)")
        #expect(
            text.sections.map(\.headingPath) == [
                [], ["Compressing with xz"], ["Compressing with xz", "Presets"], ["Notes"],
            ]
        )
        // \u8220\'93 and the rest: the \'hh fallbacks (and the '?' of the scripts cp1252 lacks) skipped.
        #expect(
            text.sections[1].text.contains(
                "“naïve” café-style prose — with ‘quotes’ — and test in Ελληνικά, Русский and 日本語."
            ),
            "\(text.sections[1].text)"
        )
        #expect(text.sections[1].text.contains("multiple filters[1] and integrity checks."))
        #expect(text.sections[2].text.hasSuffix("1. Pick a preset from -0 to -9.\n2. Add -e for the extreme variant."))
        #expect(
            text.sections[3].text
                == "# Notes\n\n[1] LZMA2 is the default filter; BCJ filters improve compression of executables."
        )
        // Nothing of the tables, the style sheet or the bookmarks leaks into the text.
        #expect(!text.fullText.contains("Times New Roman") && !text.fullText.contains("Heading 1;"))
        #expect(!text.fullText.contains("\\") && !text.fullText.contains("{"))
    }

    /// `\'hh` by the document's code page (`\ansicpg`), or by the font's `\fcharset`; double-byte code pages
    /// (two escapes per character); `\uN` with `\ucN` fallbacks of any length, and surrogate pairs.
    @Test(arguments: [
        (#"{\rtf1\ansi\ansicpg1252 caf\'e9 \'93quoted\'94 \'80 5}"#, "café “quoted” € 5"),
        (#"{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8\'e2\'e5\'f2}"#, "Привет"),
        (#"{\rtf1\ansi\ansicpg1253 \'c1\'e8\'de\'ed\'e1}"#, "Αθήνα"),
        (#"{\rtf1\ansi\ansicpg1250 \'8ail\'e9n\'fd \'9e\'e1k}"#, "\u{0160}il\u{00E9}n\u{00FD} \u{017E}\u{00E1}k"),
        (#"{\rtf1\ansi\ansicpg932 \'93\'fa\'96\'7b\'8c\'ea}"#, "日本語"),
        (#"{\rtf1\ansi\ansicpg936 \'d6\'d0\'ce\'c4}"#, "中文"),
        (#"{\rtf1\ansi\ansicpg949 \'c7\'d1\'b1\'b9\'be\'ee}"#, "한국어"),
        (#"{\rtf1\ansi\ansicpg950 \'a4\'a4\'a4\'e5}"#, "中文"),
        (#"{\rtf1\mac caf\'8e}"#, "café"),
        (
            #"{\rtf1\ansi\deff0{\fonttbl{\f0\fcharset0 Arial;}{\f1\fcharset204 Arial Cyr;}}{\f1 \'c4\'e0} and {\f0 d\'e9j\'e0}}"#,
            "Да and déjà"
        ),
        (#"{\rtf1\ansi\uc1 na\u239\'efve \u8212? done}"#, "naïve — done"),
        (#"{\rtf1\ansi\uc2 \u26085\'93\'fa\u26412\'96\'7b!}"#, "日本!"),
        (#"{\rtf1\ansi\uc0 \u8364 5}"#, "€5"),
        (#"{\rtf1\ansi \u-10179\'3f\u-8704\'3f}"#, "😀"),
        (
            #"{\rtf1\ansi a\~b\_c\emdash d\endash e\bullet \lquote x\rquote  \ldblquote y\rdblquote }"#,
            "a\u{00A0}b-c—d–e•‘x’ “y”"
        ),
        (#"{\rtf1\ansi 50\'25 \{braces\} and a \\ backslash}"#, "50% {braces} and a \\ backslash"),
    ])
    func escapesAreDecoded(rtf: String, expected: String) throws {
        let text = try Self.text(rtf)
        #expect(text.fullText == expected, "\(rtf)")
    }

    @Test func destinationsThatAreNotTextAreSkipped() throws {
        let text = try Self.text(
            #"""
            {\rtf1\ansi{\fonttbl{\f0 Times;}}{\colortbl;\red0\green0\blue0;}{\stylesheet{\s0 Normal;}}
            {\info{\title The title}{\author The author}{\operator someone}{\*\company Acme}}
            {\header Page header}{\footer Page footer}
            {\*\generator Writer 1.0;}{\*\unknowndestination with words}
            Before {\field{\*\fldinst HYPERLINK "https://example.org"}{\fldrslt the link}} after.
            {\pict\pngblip\picw10\pich10 89504e470d0a1a0a}{\object\objemb{\*\objdata 0102}{\result}}
            {\*\bkmkstart here} Kept{\pict\bin4 {{{{}\par
            Line one\line line two\tab tabbed\par
            }
            """#
        )
        #expect(text.metadata["title"] == "The title")
        #expect(text.metadata["author"] == "The author")
        #expect(text.fullText == "Before the link after. Kept\n\nLine one\nline two\ttabbed")
    }

    /// Headings by `\outlinelevelN` on the paragraph or on its style, or by a `heading N` style's name.
    @Test func headingsFromOutlineLevelsAndStyles() throws {
        let text = try Self.text(
            #"""
            {\rtf1\ansi{\stylesheet{\s0 Normal;}{\s1\outlinelevel0 Titre 1;}{\s2 heading 2;}{\s3 Body Text;}}
            \pard\s1 Chapter\par
            \pard\s3 Body of the chapter.\par
            \pard\s2 Section\par
            \pard Body of the section.\par
            \pard\outlinelevel0 Second chapter\par
            \pard Its body.\par
            }
            """#
        )
        #expect(text.sections.map(\.headingPath) == [["Chapter"], ["Chapter", "Section"], ["Second chapter"]])
        #expect(
            text.sections.map(\.text) == [
                "# Chapter\n\nBody of the chapter.", "## Section\n\nBody of the section.",
                "# Second chapter\n\nIts body.",
            ]
        )
    }

    @Test func deepNestingIsRefusedWithAReason() throws {
        let deep =
            "{\\rtf1\\ansi " + String(repeating: "{", count: 10_000) + "x" + String(repeating: "}", count: 10_000) + "}"
        let error = try DocumentSamples.failure(Self.input(deep))
        #expect(error.code == .tooDeep, "\(error)")
        #expect(error.message.contains("nested deeper than 256"), "\(error.message)")
        // 200 levels are read.
        let fine =
            "{\\rtf1\\ansi " + String(repeating: "{", count: 200) + "x" + String(repeating: "}", count: 200) + "}"
        #expect(try Self.text(fine).fullText == "x")
    }

    @Test func onlyAPictureFailsAsNoText() throws {
        let error = try DocumentSamples.failure(
            Self.input(
                #"{\rtf1\ansi{\fonttbl{\f0 Arial;}}{\*\shppict{\pict\pngblip 89504e47}}{\nonshppict{\pict\wmetafile8 0100}}\par}"#
            )
        )
        #expect(error.code == .emptyDocument, "\(error)")
        #expect(error.message.contains("no text"), "\(error.message)")
    }

    @Test func theTextIsBounded() throws {
        let rtf = "{\\rtf1\\ansi " + String(repeating: "a paragraph of words\\par ", count: 100_000) + "}"
        let error = try DocumentSamples.failure(Self.input(rtf, maxTextBytes: 1 << 20))
        #expect(error.code == .textTooLarge, "\(error)")
        // One paragraph of it all, without \par, too.
        let one = "{\\rtf1\\ansi " + String(repeating: "words ", count: 400_000) + "}"
        #expect(try DocumentSamples.failure(Self.input(one, maxTextBytes: 1 << 20)).code == .textTooLarge)
    }

    /// Truncated or unbalanced input still gives what it holds; bytes that are not RTF are not taken.
    @Test func damagedInput() throws {
        #expect(try Self.text(#"{\rtf1\ansi Cut off in the mid"#).fullText == "Cut off in the mid")
        #expect(try Self.text(#"{\rtf1\ansi Closed} trailing garbage"#).fullText == "Closed")
        #expect(try Self.text(#"{\rtf1\ansi Bad escape \'zz and \u here}"#).fullText.hasPrefix("Bad escape"))
        #expect(!RTFExtractor().accepts(Self.input(" {\\rtf1 leading space}")))
    }
}
