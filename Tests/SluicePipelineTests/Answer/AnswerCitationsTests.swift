import Testing

@testable import SluicePipeline

/// Which passages an answer cites: `[n]`, `[n][m]`, `[n, m]`, `[n; m]`, `[n-m]`.
@Suite struct AnswerCitationsTests {
    @Test(arguments: [
        ("Dawn [1].", [1]),
        ("Dawn [2][3] and dusk [1].", [1, 2, 3]),
        ("Both [1, 4] and [2; 3].", [1, 2, 3, 4]),
        ("A range [2-4] or [5–6].", [2, 3, 4, 5, 6]),
        ("No markers, [a], [], [0] or [1.5].", []),
        ("Out of range [9] is dropped.", []),
        ("Spaces [ 2 ] count.", [2]),
        ("An open bracket [see [3] hides nothing.", [3]),
        ("A year [1871] is no citation, [1] is.", [1]),
    ])
    func markersAreRead(text: String, cited: [Int]) {
        #expect(AnswerCitations.numbers(in: text, sources: 6) == Set(cited))
    }
}
