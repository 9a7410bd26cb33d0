import SluiceCore

/// The distinct values of access control's field among a store's records, each numbered once (interned: a store's
/// readers lists are few), and how to read a record's value without decoding the rest of it. The tables that let
/// restricted searches read only what their caller may read keep a number per record and these values beside it:
/// ``LocalAccessLabels`` (graph labels, vector searches) and ``LocalKeywordAccess`` (keyword record numbers).
struct LocalAccessValues: Sendable {
    /// The values by number (nil: a record without the field); number 0 stands for "no record".
    private(set) var values: [MetadataValue?] = [nil]
    private var interned: [Exact: UInt32] = [:]

    /// How many numbers are given, "no record" included.
    var count: Int { values.count }

    /// The number of `value`, given now if it is new (never 0).
    mutating func number(of value: MetadataValue?) -> UInt32 {
        if let known = interned[Exact(value)] { return known }
        let number = UInt32(values.count)
        values.append(value)
        interned[Exact(value)] = number
        return number
    }

    /// For each number, 1 when a record with its value of `field` meets every one of `conditions` (each naming
    /// `field` alone), else 0; "no record" is never met.
    func allowed(by conditions: [SearchFilter], field: String) -> [UInt8] {
        var allowed = [UInt8](repeating: 0, count: values.count)
        for index in 1..<values.count {
            let value = values[index]
            if conditions.allSatisfy({ $0.matches { $0 == field ? value : nil } }) { allowed[index] = 1 }
        }
        return allowed
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
