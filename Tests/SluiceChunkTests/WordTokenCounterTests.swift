import SluiceChunk
import SluiceCore
import Testing

@Suite struct WordTokenCounterTests {
    struct Example: CustomTestStringConvertible, Sendable {
        var text: String
        var tokens: Int
        var testDescription: String { "\(text.debugDescription) → \(tokens)" }
    }

    @Test(arguments: [
        Example(text: "", tokens: 0),
        Example(text: " \n\t\u{3000}\u{00A0}", tokens: 0),
        Example(text: "hello", tokens: 1),
        Example(text: "hello world", tokens: 2),
        Example(text: "  hello\n\nworld  ", tokens: 2),
        Example(text: "Hello, world!", tokens: 4),
        Example(text: "don't", tokens: 3),
        Example(text: "3.14", tokens: 3),
        Example(text: "x86_64", tokens: 3),
        Example(text: "naïve café", tokens: 2),
        Example(text: "nai\u{308}ve cafe\u{301}", tokens: 2),
        Example(text: "Straße Привет Γειά", tokens: 3),
        Example(text: "東京タワー", tokens: 3),
        Example(text: "北京是中国的首都。", tokens: 9),
        Example(text: "😀 👍", tokens: 2),
        Example(text: "a+b=c", tokens: 5),
        Example(text: "\u{FEFF}word", tokens: 1),
        Example(text: "abcdefghijklmnopqrstuvwx", tokens: 1),
        Example(text: "abcdefghijklmnopqrstuvwxy", tokens: 2),
        Example(text: String(repeating: "a", count: 24 * 5), tokens: 5),
    ])
    func countsWordsAndSymbols(example: Example) {
        #expect(WordTokenCounter().count(example.text) == example.tokens)
    }

    @Test func countsASubstring() {
        let text = "one two, three"
        let middle = text[text.index(text.startIndex, offsetBy: 4)...]
        #expect(WordTokenCounter().count(middle) == 3)
    }

    @Test func wordLengthCapIsConfigurable() {
        let long = String(repeating: "ab", count: 500)
        #expect(WordTokenCounter(maxWordLength: .max).count(long) == 1)
        #expect(WordTokenCounter(maxWordLength: 10).count(long) == 100)
        #expect(WordTokenCounter(maxWordLength: 1).count("abc def") == 6)
    }

    @Test(arguments: [SampleDocument.prose, SampleDocument.multilingual, SampleDocument.symbols])
    func isSubadditiveOverAnySplit(text: String) {
        // What the chunker relies on: pieces' counts add up to at least the count of the whole.
        let counter = WordTokenCounter()
        let whole = counter.count(text)
        for offset in stride(from: 0, to: text.unicodeScalars.count, by: 7) {
            let cut = text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: offset)
            #expect(whole <= counter.count(text[..<cut]) + counter.count(text[cut...]))
        }
    }
}
