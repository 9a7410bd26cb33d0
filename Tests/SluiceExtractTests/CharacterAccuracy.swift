/// OCR quality: 1 − (edit distance ÷ expected length), after folding white space, so that layout
/// differences do not count and misread characters do.
enum CharacterAccuracy {
    static func of(recognized: String, expected: String) -> Double {
        let a = Array(fold(recognized).unicodeScalars)
        let b = Array(fold(expected).unicodeScalars)
        guard !b.isEmpty else { return a.isEmpty ? 1 : 0 }
        if a.isEmpty { return 0 }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1), previous[j] + 1, current[j - 1] + 1)
            }
            swap(&previous, &current)
        }
        return max(0, 1 - Double(previous[b.count]) / Double(b.count))
    }

    private static func fold(_ text: String) -> String {
        text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
    }
}
