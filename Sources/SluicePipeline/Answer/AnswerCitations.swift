import Foundation

/// The passages an answer cites, read from its `[n]` markers: `[1]`, `[2][3]`, `[1, 4]`, `[2; 3]`, `[2-4]`.
enum AnswerCitations {
    /// The numbers from 1 to `sources` that `text` cites; other numbers (a year in brackets) are left out.
    static func numbers(in text: String, sources: Int) -> Set<Int> {
        var cited: Set<Int> = []
        var rest = text[...]
        while let open = rest.firstIndex(of: "[") {
            let inside = rest[rest.index(after: open)...]
            guard let close = inside.firstIndex(of: "]") else { break }
            cited.formUnion(numbers(inMarker: inside[..<close]))
            rest = inside[close...]
        }
        return cited.filter { $0 >= 1 && $0 <= sources }
    }

    /// `1, 4` or `2-4`: the numbers of one marker's inside, empty when it is not a list of numbers.
    private static func numbers(inMarker marker: Substring) -> Set<Int> {
        var found: Set<Int> = []
        for part in marker.split(whereSeparator: { $0 == "," || $0 == ";" }) {
            let bounds = part.split(whereSeparator: { $0 == "-" || $0 == "–" }).map {
                Int($0.trimmingCharacters(in: .whitespaces))
            }
            switch bounds.count {
            case 1:
                guard let number = bounds[0] else { return [] }
                found.insert(number)
            case 2:
                guard let low = bounds[0], let high = bounds[1], low <= high, high - low < 1000 else { return [] }
                found.formUnion(low...high)
            default:
                return []
            }
        }
        return found
    }
}
