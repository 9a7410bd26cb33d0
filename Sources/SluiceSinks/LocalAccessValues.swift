import SluiceCore

/// The distinct values of access control's field among a store's records, each numbered once (interned: a store's
/// readers lists are few), and how to read a record's value without decoding the rest of it. The tables that let
/// restricted searches read only what their caller may read keep a number per record and these values beside it:
/// ``LocalAccessLabels`` (graph labels, vector searches) and ``LocalKeywordAccess`` (keyword record numbers).
///
/// When documents belong to people the values are many (a readers list a person, or a document): a restricted
/// search then finds the values its caller's names are in through ``numbersHolding``, a map from each text a value
/// holds to the numbers of the values holding it, instead of testing every value — so its cost follows what the
/// caller may read, not how many lists the store holds (``allowed(by:field:)``).
struct LocalAccessValues: Sendable {
    /// The values by number (nil: a record without the field); number 0 stands for "no record".
    private(set) var values: [MetadataValue?] = [nil]
    private var interned: [Exact: UInt32] = [:]
    /// For each text (as ``Exact`` compares it: by its bytes, as filters do) that a value is or, for a list, holds:
    /// the numbers of those values, ascending.
    private var numbersHolding: [Exact: [UInt32]] = [:]

    /// How many numbers are given, "no record" included.
    var count: Int { values.count }

    /// The number of `value`, given now if it is new (never 0).
    mutating func number(of value: MetadataValue?) -> UInt32 {
        if let known = interned[Exact(value)] { return known }
        let number = UInt32(values.count)
        values.append(value)
        interned[Exact(value)] = number
        switch value {
        case .string: numbersHolding[Exact(value), default: []].append(number)
        case .strings(let texts):
            for text in Set(texts.map { Exact(.string($0)) }) { numbersHolding[text, default: []].append(number) }
        default: break
        }
        return number
    }

    /// For each number, 1 when a record with its value of `field` meets every one of `conditions` (each naming
    /// `field` alone), else 0; "no record" is never met. Where a condition narrows the values to those holding some
    /// texts (``candidates(for:field:)``), only those are tested, and by the other conditions alone.
    func allowed(by conditions: [SearchFilter], field: String) -> [UInt8] {
        var allowed = [UInt8](repeating: 0, count: values.count)
        func test(_ index: Int, _ conditions: ArraySlice<SearchFilter>) {
            let value = values[index]
            if conditions.allSatisfy({ $0.matches { $0 == field ? value : nil } }) { allowed[index] = 1 }
        }
        if let narrowed = narrowing(conditions, field: field) {
            var rest = conditions
            rest.remove(at: narrowed.condition)
            for number in narrowed.numbers { test(Int(number), rest[...]) }
        } else {
            for index in 1..<values.count { test(index, conditions[...]) }
        }
        return allowed
    }

    /// The numbers of the only values that can meet `conditions` (ascending), when one of them asks for `field` to
    /// equal one of some texts (`field in (a, b)`, `field = a`: what `serve` adds for a restricted caller) that are
    /// not times — those texts equal only values that are, or lists that hold, the same bytes
    /// (`SearchFilter.equal`), so each of these meets that condition; nil when no condition narrows them so (every
    /// value must be tested).
    func candidates(for conditions: [SearchFilter], field: String) -> [UInt32]? {
        narrowing(conditions, field: field).map { Array(Set($0.numbers)).sorted() }
    }

    /// The condition of `conditions` that narrows the values most through ``numbersHolding``, and the numbers of the
    /// values holding its texts (a value holding two of them is listed twice).
    private func narrowing(_ conditions: [SearchFilter], field: String) -> (condition: Int, numbers: [UInt32])? {
        var narrowest: (condition: Int, numbers: [UInt32])?
        for (position, condition) in conditions.enumerated() {
            let texts: [MetadataValue]
            switch condition {
            case .oneOf(let name, let candidates) where name == field: texts = candidates
            case .compare(let name, .equal, let candidate) where name == field: texts = [candidate]
            default: continue
            }
            var numbers: [UInt32] = []
            var plain = true
            for text in texts {
                guard case .string = text, text.date == nil else {
                    plain = false
                    break
                }
                numbers += numbersHolding[Exact(text)] ?? []
            }
            guard plain else { continue }
            if let current = narrowest, current.numbers.count <= numbers.count { continue }
            narrowest = (position, numbers)
        }
        return narrowest
    }

    /// A value as filters compare it: texts by their bytes (`SearchFilter.equal`), where Swift's `==` and hash take
    /// canonically equivalent texts (`é` composed or not) as one — which would give two records whose readers
    /// differ in their bytes one number, and one of them the other's readers.
    private struct Exact: Hashable {
        let value: MetadataValue?

        init(_ value: MetadataValue?) { self.value = value }

        static func == (a: Exact, b: Exact) -> Bool {
            switch (a.value, b.value) {
            case (.string(let x), .string(let y)): return x.utf8.elementsEqual(y.utf8)
            case (.strings(let x), .strings(let y)):
                return x.count == y.count && zip(x, y).allSatisfy { $0.utf8.elementsEqual($1.utf8) }
            case (.string, _), (.strings, _), (_, .string), (_, .strings): return false
            default: return a.value == b.value
            }
        }

        func hash(into hasher: inout Hasher) {
            switch value {
            case .string(let text):
                hasher.combine(0 as UInt8)
                Self.combine(text, into: &hasher)
            case .strings(let texts):
                hasher.combine(1 as UInt8)
                hasher.combine(texts.count)
                for text in texts { Self.combine(text, into: &hasher) }
            default: hasher.combine(value)
            }
        }

        /// `text`'s length and bytes.
        private static func combine(_ text: String, into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
        }
    }

    /// The value of `field` in a record's stored bytes (the vector, then the fields: `LocalRecordLayout`);
    /// `.none` for bytes that do not read (such a record is never readable: a search skips it).
    static func value(in bytes: UnsafeRawBufferPointer, field: String, id: [UInt8]) -> MetadataValue?? {
        guard bytes.count >= 4 else { return .none }
        let dimension = Int(UInt32(littleEndian: bytes.loadUnaligned(as: UInt32.self)))
        let vectorEnd = 4 + dimension * 4
        guard dimension <= (bytes.count - 4) / 4 else { return .none }
        do {
            return .some(
                try LocalRecordLayout.metadataValue(
                    named: field,
                    in: UnsafeRawBufferPointer(rebasing: bytes[vectorEnd...]),
                    record: String(decoding: id, as: UTF8.self)
                )
            )
        } catch {
            return .none
        }
    }
}
