import SluiceCore
import SluiceEmbed
import Testing

/// Counts white-space-separated words; the embedder only hands it out.
private struct SpaceCounter: TokenCounter {
    func count(_ text: Substring) -> Int { text.split(whereSeparator: \.isWhitespace).count }
}

private func cosine(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
}

private func norm(_ vector: [Float]) -> Float {
    vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
}

@Suite struct HashEmbedderTests {
    let embedder = HashEmbedder(tokenCounter: SpaceCounter())

    @Test func identityAndLimits() {
        #expect(embedder.identity == EmbedderIdentity(provider: "hash", model: "feature-hash-v1", dimensions: 384))
        #expect(embedder.identity.description == "hash/feature-hash-v1@384")
        #expect(HashEmbedder(dimensions: 64, tokenCounter: SpaceCounter()).identity.dimensions == 64)
        #expect(embedder.limits.maxBatchSize == 1024)
        #expect(embedder.limits.maxTokensPerInput >= 1 << 30)
        #expect(embedder.limits.maxTokensPerRequest >= 1 << 30)
        #expect(embedder.tokenCounter.count("two words") == 2)
    }

    @Test func sameTextGivesTheSameVector() async {
        let text = "Deterministic: the same text always embeds the same, across runs and machines."
        let first = await embedder.embed([text, text])
        let again = await HashEmbedder(tokenCounter: SpaceCounter()).embed([text])
        #expect(first[0] == first[1])
        #expect(first[0] == again[0])
    }

    @Test(arguments: [1, 2, 7, 384, 1536])
    func vectorsHaveTheDimensionsAndUnitLength(dimensions: Int) async {
        let embedder = HashEmbedder(dimensions: dimensions, tokenCounter: SpaceCounter())
        let texts = ["the cat sat on the mat", "Ünïcödé TEXT 東京 2024", "", "  ...!?  ", "a"]
        let vectors = await embedder.embed(texts)
        #expect(vectors.count == texts.count)
        for vector in vectors {
            #expect(vector.count == dimensions)
            #expect(abs(norm(vector) - 1) < 1e-5)
        }
    }

    @Test func textWithoutWordsGetsTheFixedUnitVector() async {
        let vectors = await embedder.embed(["", "   ", "!!! --- ???"])
        var expected = [Float](repeating: 0, count: 384)
        expected[0] = 1
        #expect(vectors.allSatisfy { $0 == expected })
    }

    @Test func tokensAreCaseAndPunctuationInsensitive() async {
        let vectors = await embedder.embed(["Hello, World!", "hello world", "HELLO... world?"])
        #expect(vectors[0] == vectors[1])
        #expect(vectors[1] == vectors[2])
    }

    @Test func wordOrderMattersThroughBigrams() async {
        let vectors = await embedder.embed(["new york times", "times york new"])
        #expect(vectors[0] != vectors[1])
        #expect(cosine(vectors[0], vectors[1]) > 0.5)
    }

    @Test func similarTextsAreCloserThanUnrelatedOnes() async {
        let vectors = await embedder.embed([
            "the cat sat on the mat", "a cat sat on a mat", "quarterly tax filing deadline",
        ])
        let similar = cosine(vectors[0], vectors[1])
        let unrelated = cosine(vectors[0], vectors[2])
        // Shared: cat, sat, on, mat and the bigrams "cat sat", "sat on"; "the" twice against "a" twice.
        #expect(similar > 0.4)
        #expect(abs(unrelated) < 0.2)
        #expect(similar > unrelated + 0.3)
    }

    @Test(arguments: [
        ("how do I recover vectors after a crash", 1),
        ("tesseract OCR scanned pages", 2),
        ("Retry-After header on 429", 3),
        ("cosine similarity of unit vectors", 0),
        ("東京 首都", 4),
    ])
    func aQueryRanksItsDocumentFirst(query: String, expected: Int) async {
        let documents = [
            "Feature hashing maps words to buckets; the vectors are unit length, so cosine similarity is a dot product.",
            "After a crash, run the same command again: the checkpoint lets the run recover, and no vectors are lost or duplicated.",
            "Scanned pages without a text layer go through Tesseract OCR, one page at a time, on a thread of their own.",
            "A 429 response honours the Retry-After header; other transient failures back off exponentially with jitter.",
            "東京は日本の首都です。人口は約千四百万人です。",
        ]
        let vectors = await embedder.embed(documents + [query])
        let queryVector = vectors[documents.count]
        let scores = vectors.prefix(documents.count).map { cosine($0, queryVector) }
        let best = scores.indices.max { scores[$0] < scores[$1] }
        #expect(best == expected, "scores: \(scores)")
    }

    @Test func aBatchEmbedsEachTextAsAlone() async {
        let texts = (0..<50).map { "document number \($0) about topic \($0 % 7)" }
        let batch = await embedder.embed(texts)
        for (index, text) in texts.enumerated() {
            #expect(await embedder.embed([text])[0] == batch[index])
        }
        #expect(await embedder.embed([]).isEmpty)
    }
}
