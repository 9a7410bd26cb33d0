import SluiceChunk
import SluiceCore
import Synchronization
import Testing

/// Counts like `base`, and adds up how many bytes it was asked to count: the chunker's work, measured
/// without a clock.
final class MeteredCounter: TokenCounter {
    let base: any TokenCounter
    private let bytes = Atomic<Int>(0)
    init(_ base: any TokenCounter) { self.base = base }
    func count(_ text: Substring) -> Int {
        bytes.add(text.utf8.count, ordering: .relaxed)
        return base.count(text)
    }
    var bytesCounted: Int { bytes.load(ordering: .relaxed) }
}

/// One UTF-8 byte in four (rounded up), white space included: not subadditive, since the white space
/// between two pieces adds to the count of the whole. Exercises the chunker's recount-and-shrink path.
struct ByteQuarterCounter: TokenCounter {
    func count(_ text: Substring) -> Int { (text.utf8.count + 3) / 4 }
}

/// The counters the sweeps run with.
enum CounterCase: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case words
    case shortWords
    case byteQuarters

    var counter: any TokenCounter {
        switch self {
        case .words: WordTokenCounter()
        case .shortWords: WordTokenCounter(maxWordLength: 3)
        case .byteQuarters: ByteQuarterCounter()
        }
    }

    var testDescription: String { rawValue }
}
