import SluiceChunk
import SluiceCore
import Testing

/// A chunk size and an overlap.
struct ChunkBudget: CustomTestStringConvertible, Sendable {
    var maxTokens: Int
    var overlapTokens: Int

    var testDescription: String { "max \(maxTokens) overlap \(overlapTokens)" }

    /// From one token (every chunk a single token, or a slice of a long word) to more than the whole
    /// document, each with no overlap, the least overlap, and overlaps of an eighth, a half and all but
    /// one token of the chunk.
    static let sweep: [ChunkBudget] = {
        var budgets: [ChunkBudget] = []
        for maxTokens in [1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 100, 128, 256, 512, 10_000] {
            var overlaps = [0, 1, maxTokens / 8, maxTokens / 2, maxTokens - 1].filter { $0 < maxTokens }
            overlaps = overlaps.enumerated().filter { !overlaps[..<$0.offset].contains($0.element) }.map(\.element)
            budgets += overlaps.map { ChunkBudget(maxTokens: maxTokens, overlapTokens: $0) }
        }
        return budgets
    }()
}

@Suite struct RecursiveChunkerTests {
    @Test(arguments: ChunkBudget.sweep, CounterCase.allCases)
    func guaranteesHoldForEveryBudget(budget: ChunkBudget, counterCase: CounterCase) {
        let counter = counterCase.counter
        let chunker = RecursiveChunker(
            maxTokens: budget.maxTokens,
            overlapTokens: budget.overlapTokens,
            counter: counter
        )
        let chunks = chunker.chunk(SampleDocument.document)
        #expect(!chunks.isEmpty)
        expectChunkGuarantees(
            chunks,
            of: SampleDocument.document,
            maxTokens: budget.maxTokens,
            overlapTokens: budget.overlapTokens,
            counter: counter
        )
    }

    @Test(arguments: ChunkBudget.sweep.filter { $0.overlapTokens == 0 }, CounterCase.allCases)
    func withoutOverlapEveryVisibleCharacterAppearsOnceInOrder(budget: ChunkBudget, counterCase: CounterCase) {
        let chunker = RecursiveChunker(maxTokens: budget.maxTokens, overlapTokens: 0, counter: counterCase.counter)
        let chunks = chunker.chunk(SampleDocument.document)
        let input = SampleDocument.document.sections.map { visible($0.text) }.joined()
        #expect(chunks.map { visible($0.text) }.joined() == input)
    }

    @Test(arguments: [ChunkBudget(maxTokens: 7, overlapTokens: 3), ChunkBudget(maxTokens: 256, overlapTokens: 32)])
    func sameInputGivesSameChunks(budget: ChunkBudget) {
        let first = RecursiveChunker(
            maxTokens: budget.maxTokens,
            overlapTokens: budget.overlapTokens,
            counter: WordTokenCounter()
        )
        let second = RecursiveChunker(
            maxTokens: budget.maxTokens,
            overlapTokens: budget.overlapTokens,
            counter: WordTokenCounter()
        )
        let chunks = first.chunk(SampleDocument.document)
        #expect(chunks == first.chunk(SampleDocument.document))
        #expect(chunks == second.chunk(SampleDocument.document))
    }

    @Test func sectionsAreNeverMerged() {
        let document = ExtractedText(sections: [
            TextSection(text: "One short section.", page: 1, headingPath: ["A"]),
            TextSection(text: "Another short one.", page: 2, headingPath: ["A", "B"]),
        ])
        let chunks = RecursiveChunker(maxTokens: 256, overlapTokens: 32, counter: WordTokenCounter()).chunk(document)
        #expect(chunks.map(\.text) == ["One short section.", "Another short one."])
        #expect(chunks.map(\.ordinal) == [0, 1])
        #expect(chunks.map(\.page) == [1, 2])
        #expect(chunks.map(\.headingPath) == [["A"], ["A", "B"]])
        #expect(chunks.map(\.startOffset) == [0, 0])
        #expect(chunks.map(\.tokenCount) == [4, 4])
    }

    @Test(arguments: ["", " ", "\n\n\t \u{3000}\u{00A0}\r\n"])
    func blankTextGivesNoChunks(text: String) {
        let chunker = RecursiveChunker(maxTokens: 8, overlapTokens: 2, counter: WordTokenCounter())
        #expect(chunker.chunk(ExtractedText(sections: [TextSection(text: text)])).isEmpty)
        #expect(chunker.chunk(ExtractedText(sections: [])).isEmpty)
    }

    @Test func paragraphsThatFitStayWhole() {
        let paragraphs = [
            "The first paragraph has exactly ten words in it, honestly.",
            "The second paragraph also has ten words, or close enough.",
            "The third paragraph is the last one and stands alone.",
        ]
        let text = "  " + paragraphs.joined(separator: "\n\n") + "\n"
        let chunks = RecursiveChunker(maxTokens: 25, overlapTokens: 0, counter: WordTokenCounter())
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(chunks.map(\.text) == [paragraphs[0] + "\n\n" + paragraphs[1], paragraphs[2]])
        #expect(chunks.first?.startOffset == 2)
    }

    @Test func longParagraphsSplitAtSentencesBeforeWords() {
        let text = "Alpha beta gamma delta. Epsilon zeta eta theta! Iota kappa lambda mu? Nu xi omicron pi."
        let chunks = RecursiveChunker(maxTokens: 10, overlapTokens: 0, counter: WordTokenCounter())
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(
            chunks.map(\.text) == [
                "Alpha beta gamma delta. Epsilon zeta eta theta!", "Iota kappa lambda mu? Nu xi omicron pi.",
            ]
        )
    }

    @Test func fullWidthFullStopsEndSentencesWithoutSpaces() {
        let text = "今日は晴れです。明日は雨でしょう。明後日は雪かもしれません。"
        let chunks = RecursiveChunker(maxTokens: 9, overlapTokens: 0, counter: WordTokenCounter())
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(chunks.map(\.text) == ["今日は晴れです。", "明日は雨でしょう。", "明後日は雪かもしれません。"])
        #expect(chunks.map(\.startOffset) == [0, "今日は晴れです。".utf8.count, "今日は晴れです。明日は雨でしょう。".utf8.count])
    }

    @Test func startOffsetCountsUTF8Bytes() {
        let text = "Ça coûte 5 €.\n\nÜber 東京 — naïve."
        let chunks = RecursiveChunker(maxTokens: 6, overlapTokens: 0, counter: WordTokenCounter())
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(chunks.map(\.text) == ["Ça coûte 5 €.", "Über 東京 — naïve."])
        #expect(chunks.map(\.startOffset) == [0, "Ça coûte 5 €.\n\n".utf8.count])
    }

    @Test func overlapRepeatsTheEndOfThePreviousChunk() {
        let counter = WordTokenCounter()
        let section = TextSection(text: SampleDocument.prose)
        let chunks = RecursiveChunker(maxTokens: 40, overlapTokens: 10, counter: counter)
            .chunk(ExtractedText(sections: [section]))
        let bytes = Array(section.text.utf8)
        var overlapping = 0
        var sharedTokens: [Int] = []
        for (previous, next) in zip(chunks, chunks.dropFirst()) {
            let previousEnd = previous.startOffset + previous.text.utf8.count
            guard next.startOffset < previousEnd else { continue }
            overlapping += 1
            let shared = decode(bytes[next.startOffset..<previousEnd])
            #expect(previous.text.hasSuffix(shared) && next.text.hasPrefix(shared))
            #expect(counter.count(shared) <= 10)
            sharedTokens.append(counter.count(shared))
        }
        #expect(chunks.count > 5)
        #expect(overlapping == chunks.count - 1)
        // About overlapTokens: whole sentences when they fit, else the last words of one.
        #expect(sharedTokens.reduce(0, +) >= 6 * sharedTokens.count, "\(sharedTokens)")
    }

    @Test func overlapNeverPushesAChunkOverTheBudget() {
        // Sentences of 8 tokens with a budget of 10: a chunk holds one sentence and only 2 tokens of
        // overlap could ever be added, less than any whole piece, so the overlap comes from words.
        let text = Array(repeating: "One two three four five six seven.", count: 6).joined(separator: " ")
        let counter = WordTokenCounter()
        let chunks = RecursiveChunker(maxTokens: 10, overlapTokens: 4, counter: counter)
            .chunk(ExtractedText(sections: [TextSection(text: text)]))
        #expect(chunks.allSatisfy { counter.count($0.text) <= 10 })
        expectChunkGuarantees(
            chunks,
            of: ExtractedText(sections: [TextSection(text: text)]),
            maxTokens: 10,
            overlapTokens: 4,
            counter: counter
        )
    }

    @Test func aLongWordIsCutBetweenCharactersNotInsideClusters() {
        let word = String(repeating: "e\u{301}👍🏽a\u{308}👨‍👩‍👧", count: 200)
        let text = "before " + word + " after"
        for counter in [WordTokenCounter(maxWordLength: 4), WordTokenCounter()] as [any TokenCounter] {
            let chunks = RecursiveChunker(maxTokens: 8, overlapTokens: 0, counter: counter)
                .chunk(ExtractedText(sections: [TextSection(text: text)]))
            #expect(chunks.count > 10)
            #expect(visible(chunks.map(\.text).joined()) == visible(text))
            for chunk in chunks {
                let first = chunk.text.unicodeScalars.first!
                #expect(first.properties.generalCategory != .nonspacingMark, "starts inside a cluster")
                #expect(first.value != 0x200D && !(0x1F3FB...0x1F3FF).contains(first.value))
                #expect(chunk.text.unicodeScalars.last!.value != 0x200D)
            }
        }
    }

    @Test func aCounterThatIsNotSubadditiveStillGetsChunksThatFit() {
        // With a byte counter the spaces between pieces add up, so sums of piece counts underestimate.
        let counter = ByteQuarterCounter()
        let text = Array(repeating: "abcd", count: 200).joined(separator: " ")
        let document = ExtractedText(sections: [TextSection(text: text)])
        let chunks = RecursiveChunker(maxTokens: 10, overlapTokens: 3, counter: counter).chunk(document)
        expectChunkGuarantees(chunks, of: document, maxTokens: 10, overlapTokens: 3, counter: counter)
        #expect(chunks.dropLast().allSatisfy { $0.text.utf8.count > 30 }, "chunks are still filled")
    }
}
