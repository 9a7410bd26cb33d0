import Testing

@testable import SluiceExtract

@Suite struct PDFTextCleanupTests {
    @Test(arguments: [
        ("the extrac-\ntion of text", "the extraction\nof text"),
        ("a hyphen-\nated word\nnext", "a hyphenated\nword\nnext"),
        ("soft\u{AD}\nhyphen here", "softhyphen\nhere"),
        ("licensed GPL-\n2 or later", "licensed GPL-\n2 or later"),
        ("see the Unix-\nLike systems", "see the Unix-\nLike systems"),
        ("a dash --\nand more", "a dash --\nand more"),
        ("no hyphen\nat all", "no hyphen\nat all"),
        ("chain-\nre-\naction done", "chainreaction\ndone"),
        ("ends in a hyphen-", "ends in a hyphen-"),
        ("é-\nmigré ünter-\nsuchung", "émigré\nüntersuchung"),
        ("line\r\nwith CRLF-\r\nendings", "line\r\nwith CRLF-\r\nendings"),
    ])
    func joinsHyphenationOnlyBeforeLowercase(input: String, expected: String) {
        #expect(PDFTextCleanup.joinHyphenatedLines(input) == expected)
    }

    /// The byte scan that lets most pages through untouched finds both hyphens, and only at a line end.
    @Test(arguments: [
        ("a-\nb", true), ("soft\u{AD}\nhyphen", true), ("a - b\nc", false), ("no newline-", false),
        ("\u{AD}", false), ("-\r\n", false), ("", false),
    ])
    func findsHyphensAtLineEnds(text: String, expected: Bool) {
        #expect(PDFTextCleanup.hasHyphenAtLineEnd(text) == expected)
    }

    @Test func stripsHeadersAndPageNumbersRepeatedOnMostPages() {
        let bodies = [
            "Apples grow on trees.", "Bears sleep in winter.", "Cats chase mice.", "Dogs bark.", "Eels swim.",
        ]
        let pages = bodies.enumerated().map {
            "Manual of Things\n\($0.element)\nMore: \($0.element.reversed())\nPage \($0.offset + 1) of 5"
        }
        let stripped = PDFTextCleanup.stripRepeatedEdges(pages)
        for (index, page) in stripped.enumerated() {
            #expect(!page.contains("Manual of Things"))
            #expect(!page.contains("of 5"))
            #expect(page.hasPrefix(bodies[index]), "\(page)")
        }
    }

    @Test func keepsLinesThatRepeatOnFewPagesOrInShortDocuments() {
        let pages = ["Intro\nA", "Intro\nB", "Other\nC", "Other\nD", "Third\nE"]
        #expect(PDFTextCleanup.stripRepeatedEdges(pages) == pages)
        let short = ["Header\nA", "Header\nB"]
        #expect(PDFTextCleanup.stripRepeatedEdges(short) == short)
    }
}

@Suite struct PageRangeTests {
    @Test(arguments: [(0, 2), (1, 2), (4, 2), (5, 2), (37, 2), (397, 2), (2382, 2), (100, 8)])
    func rangesCoverEveryPageOnceInOrder(pages: Int, workers: Int) {
        let ranges = IsolatedExtractor.pageRanges(pageCount: pages, workers: workers)
        #expect(ranges.flatMap { Array($0) } == Array(0..<pages))
        #expect(ranges.allSatisfy { $0.count <= 32 })
        #expect(ranges.dropLast().allSatisfy { $0.count >= min(4, pages) })
    }
}
