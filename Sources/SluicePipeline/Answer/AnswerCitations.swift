import Foundation

/// The passages an answer cites, read from its `[n]` markers: `[1]`, `[2][3]`, `[1, 4]`, `[2; 3]`, `[2-4]`.
///
/// A bracket holding anything but numbers and ranges is no marker; numbers of 1000 and more (a year in
/// brackets, `[1871]`) are no citation.
enum AnswerCitations {
    /// One `[…]` marker: where it is in the text and the numbers it names, in its order.
    struct Marker: Hashable {
        var range: Range<String.Index>
        var numbers: [Int]
    }

    /// The smallest number that is no citation.
    static let notACitation = 1000

    /// The numbers from 1 to `sources` that `text` cites; other numbers are left out.
    static func numbers(in text: String, sources: Int) -> Set<Int> {
        Set(markers(in: text).flatMap(\.numbers).filter { $0 >= 1 && $0 <= sources })
    }

    /// Every marker of `text`, in order.
    static func markers(in text: String) -> [Marker] {
        var found: [Marker] = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "[") {
            let inside = rest[rest.index(after: open)...]
            guard let close = inside.firstIndex(where: { $0 == "]" || $0 == "[" }) else { break }
            // An opening bracket before the close (`[see [2]`): the marker, if any, starts there.
            guard inside[close] == "]" else {
                rest = inside[close...]
                continue
            }
            let numbers = numbers(inMarker: inside[..<close]).filter { $0 < notACitation }
            if !numbers.isEmpty { found.append(Marker(range: open..<text.index(after: close), numbers: numbers)) }
            rest = inside[close...]
        }
        return found
    }

    /// `1, 4` or `2-4`: the numbers of one marker's inside, empty when it is not a list of numbers.
    private static func numbers(inMarker marker: Substring) -> [Int] {
        var found: [Int] = []
        for part in marker.split(whereSeparator: { $0 == "," || $0 == ";" }) {
            let bounds = part.split(whereSeparator: { $0 == "-" || $0 == "–" }).map {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            switch bounds.count {
            case 1:
                guard let number = bounds[0] else { return [] }
                found.append(number)
            case 2:
                guard let low = bounds[0], let high = bounds[1], low <= high, high - low < 1000 else { return [] }
                found.append(contentsOf: low...high)
            default:
                return []
            }
        }
        return found
    }
}
