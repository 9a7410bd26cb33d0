import SluiceChunk
import SluiceCore
import Testing

@Suite struct StructuredChunkerTests {
    let counter = WordTokenCounter()

    @Test func smallSectionsUnderOneHeadingMergeUnderTheirCommonPath() {
        let document = ExtractedText(sections: [
            TextSection(text: "# Guide\n\nIntro words.", headingPath: ["Guide"]),
            TextSection(text: "## Install\n\nRun make.", headingPath: ["Guide", "Install"]),
            TextSection(text: "## Use\n\nRun it.", headingPath: ["Guide", "Use"]),
            TextSection(text: "# Other\n\nElsewhere.", headingPath: ["Other"]),
        ])
        let chunks = StructuredChunker(maxTokens: 64, overlapTokens: 0, counter: counter).chunk(document)
        #expect(chunks.map(\.headingPath) == [["Guide"], ["Other"]])
        #expect(chunks[0].text == "# Guide\n\nIntro words.\n\n## Install\n\nRun make.\n\n## Use\n\nRun it.")
        #expect(chunks.map(\.ordinal) == [0, 1])
    }

    @Test func siblingsMergeButPagesAndMetadataDoNot() {
        let document = ExtractedText(sections: [
            TextSection(text: "One.", page: 1, headingPath: ["A", "B"]),
            TextSection(text: "Two.", page: 1, headingPath: ["A", "C"]),
            TextSection(text: "Three.", page: 2, headingPath: ["A", "C"]),
            TextSection(text: "Four.", page: 2, headingPath: ["A", "C"], metadata: ["line": "9"]),
        ])
        let chunks = StructuredChunker(maxTokens: 64, overlapTokens: 0, counter: counter).chunk(document)
        #expect(chunks.map(\.text) == ["One.\n\nTwo.", "Three.", "Four."])
        #expect(chunks.map(\.headingPath) == [["A"], ["A", "C"], ["A", "C"]])
        #expect(chunks[2].metadata == ["line": "9"])
    }

    @Test(arguments: [8, 16, 32])
    func largeSectionsAreSplitAtParagraphsAndKeepTheirPath(maxTokens: Int) {
        let paragraph = "Words in a paragraph that is long enough to fill a chunk."
        let big = Array(repeating: paragraph, count: 6).joined(separator: "\n\n")
        let document = ExtractedText(sections: [
            TextSection(text: big, headingPath: ["Big"]),
            TextSection(text: "Small.", headingPath: ["Big", "Small"]),
        ])
        let chunks = StructuredChunker(maxTokens: maxTokens, overlapTokens: 0, counter: counter).chunk(document)
        #expect(chunks.allSatisfy { $0.tokenCount <= maxTokens })
        #expect(chunks.last?.text == "Small.")
        #expect(chunks.last?.headingPath == ["Big", "Small"])
        #expect(chunks.dropLast().allSatisfy { $0.headingPath == ["Big"] })
    }
}
