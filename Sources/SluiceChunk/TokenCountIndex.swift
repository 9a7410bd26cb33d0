import SluiceCore

/// The counts of a section's text before each of its cuts, from one pass of an ``AdditiveTokenCounter``:
/// the count of any range of the section is then the sum of the counts between the cuts inside it, plus
/// a count of the few bytes between the range's ends and the nearest cuts (a word at each end).
///
/// Exact by the counter's promise: a cut splits any text around it into parts whose counts add up, so
/// `count(s..<e) = count(s..<q1) + (before[q2] - before[q1]) + count(q2..<e)` for the first cut `q1` after
/// `s` and the last cut `q2` at or before `e`.
struct TokenCountIndex {
    /// Cut offsets, ascending; the first is 0 and the last the end of the text (both cut trivially).
    private var offsets: [Int] = [0]
    /// The count of the text before each cut.
    private var before: [Int] = [0]

    init(counter: any AdditiveTokenCounter, text: Substring, length: Int) {
        var offsets = self.offsets
        var before = self.before
        let total = counter.count(text) { offset, tokens in
            offsets.append(offset)
            before.append(tokens)
        }
        if offsets.last != length {
            offsets.append(length)
            before.append(total)
        }
        self.offsets = offsets
        self.before = before
    }

    /// The count of the text at `range`; `recount` counts a range directly (for the ends).
    func count(_ range: Range<Int>, recount: (Range<Int>) -> Int) -> Int {
        // q1: the first cut at or after the start; q2: the last cut at or before the end.
        let first = firstIndex(atOrAfter: range.lowerBound)
        guard first < offsets.count, offsets[first] <= range.upperBound else { return recount(range) }
        var last = firstIndex(atOrAfter: range.upperBound)
        if last == offsets.count || offsets[last] > range.upperBound { last -= 1 }
        let q1 = offsets[first]
        let q2 = offsets[last]
        var tokens = before[last] - before[first]
        if q1 > range.lowerBound { tokens += recount(range.lowerBound..<q1) }
        if q2 < range.upperBound { tokens += recount(q2..<range.upperBound) }
        return tokens
    }

    /// The index of the first cut at or after `offset` (`offsets.count` if none).
    private func firstIndex(atOrAfter offset: Int) -> Int {
        var low = 0
        var high = offsets.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle] < offset { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
