/// The vectors of an OpenAI `/v1/embeddings` answer read straight from its bytes, without a generic JSON tree.
///
/// `JSONSerialization` built a dictionary, an array and a bridged string or number per embedding for every
/// answer (and a base64 string was copied into `Data` before it was decoded). This scan walks the bytes once:
/// `data[].index` and `data[].embedding` are read, every other value is checked against JSON's grammar and
/// skipped. It answers only where the answer is certain to equal `JSONSerialization`'s reading; anywhere
/// else it returns `nil` and the caller reads the answer as before, so its refusals and their wording do not
/// change:
/// - a string with an escape or a byte outside ASCII (in a key or a value), a key seen twice in an object
///   the scan reads (the top level, an item of `data`), nesting deeper than 64;
/// - an `index` that is not plain digits (a sign, a fraction, an exponent, more than 15 digits);
/// - a base64 embedding that is not canonical (a length not a multiple of four, padding inside, bits left
///   over after the last byte) or not a whole number of float32 values;
/// - a number in an embedding list without a fraction or an exponent (`JSONSerialization` reads those as
///   integers, which convert to `Float` by another rounding), or one whose value is not finite as a `Double`;
/// - a missing, repeated or out-of-range index, a list of the wrong length, anything not JSON.
enum OpenAIEmbeddingsScan {
    /// The `count` vectors of `body` in input order, or `nil` where the answer must be read the general way.
    static func vectors(in body: [UInt8], count: Int) -> [[Float]]? {
        body.withUnsafeBufferPointer { bytes in
            var scanner = Scanner(bytes: bytes)
            return scanner.answer(count: count)
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var at = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// `{ …, "data": [ {"index": i, "embedding": …}, … ], … }` and nothing but white space after it.
        mutating func answer(count: Int) -> [[Float]]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var vectors: [[Float]]?
            var keys: [Range<Int>] = []
            if !take(UInt8(ascii: "}")) {
                repeat {
                    guard let key = newKey(&keys), take(UInt8(ascii: ":")) else { return nil }
                    if matches(key, "data") {
                        guard let read = data(count: count) else { return nil }
                        vectors = read
                    } else {
                        guard skipValue(depth: 1) else { return nil }
                    }
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            guard at == bytes.count else { return nil }
            return vectors
        }

        /// The list of embeddings: every index once, each within `count`.
        private mutating func data(count: Int) -> [[Float]]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var vectors = [[Float]?](repeating: nil, count: count)
            var filled = 0
            if !take(UInt8(ascii: "]")) {
                repeat {
                    guard let (index, vector) = item(), index < count, vectors[index] == nil else { return nil }
                    vectors[index] = vector
                    filled += 1
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")) else { return nil }
            }
            guard filled == count else { return nil }
            return vectors.map { $0! }
        }

        /// One item of `data`: its index and its vector; other keys skipped.
        private mutating func item() -> (Int, [Float])? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var index: Int?
            var vector: [Float]?
            var keys: [Range<Int>] = []
            if !take(UInt8(ascii: "}")) {
                repeat {
                    guard let key = newKey(&keys), take(UInt8(ascii: ":")) else { return nil }
                    if matches(key, "index") {
                        guard let read = plainInteger() else { return nil }
                        index = read
                    } else if matches(key, "embedding") {
                        skipSpace()
                        guard at < bytes.count else { return nil }
                        if bytes[at] == UInt8(ascii: "\"") {
                            guard let text = plainString(),
                                let read = Self.base64Floats(UnsafeBufferPointer(rebasing: bytes[text]))
                            else { return nil }
                            vector = read
                        } else {
                            guard let read = numbers() else { return nil }
                            vector = read
                        }
                    } else {
                        guard skipValue(depth: 2) else { return nil }
                    }
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            guard let index, let vector else { return nil }
            return (index, vector)
        }

        /// A list of numbers that each have a fraction or an exponent, as `Float(Double)` — what
        /// `NSNumber.floatValue` gives for the `Double` that `JSONSerialization` reads.
        private mutating func numbers() -> [Float]? {
            guard take(UInt8(ascii: "[")) else { return nil }
            var values: [Float] = []
            values.reserveCapacity(64)
            if take(UInt8(ascii: "]")) { return values }
            repeat {
                skipSpace()
                guard let (range, isInteger) = number(), !isInteger else { return nil }
                let text = UnsafeBufferPointer(rebasing: bytes[range])
                guard let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else { return nil }
                values.append(Float(value))
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "]")) else { return nil }
            return values
        }

        /// Digits only, at most 15 of them.
        private mutating func plainInteger() -> Int? {
            skipSpace()
            guard let (range, isInteger) = number(), isInteger, bytes[range.lowerBound] != UInt8(ascii: "-"),
                range.count <= 15
            else { return nil }
            var value = 0
            for byte in bytes[range] { value = value * 10 + Int(byte &- UInt8(ascii: "0")) }
            return value
        }

        // MARK: The grammar

        mutating func skipSpace() {
            while at < bytes.count {
                switch bytes[at] {
                case 0x20, 0x0A, 0x0D, 0x09: at += 1
                default: return
                }
            }
        }

        /// Takes `byte` after white space, if it is next.
        mutating func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < bytes.count, bytes[at] == byte else { return false }
            at += 1
            return true
        }

        /// An object's key that it has not had before (`keys` holds those it had).
        private mutating func newKey(_ keys: inout [Range<Int>]) -> Range<Int>? {
            guard let key = plainString() else { return nil }
            for other in keys where bytes[other].elementsEqual(bytes[key]) { return nil }
            keys.append(key)
            return key
        }

        /// Whether the string at `range` is `word`.
        private func matches(_ range: Range<Int>, _ word: StaticString) -> Bool {
            range.count == word.utf8CodeUnitCount
                && bytes[range].elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: range.count))
        }

        /// A string of printable ASCII without escapes: where its bytes are, between the quotes.
        mutating func plainString() -> Range<Int>? {
            skipSpace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { return nil }
            let start = at + 1
            var end = start
            while end < bytes.count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "\"") {
                    at = end + 1
                    return start..<end
                }
                guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
                end += 1
            }
            return nil
        }

        /// Any value (of plain strings), checked and passed over.
        mutating func skipValue(depth: Int) -> Bool {
            guard depth <= 64 else { return false }
            skipSpace()
            guard at < bytes.count else { return false }
            switch bytes[at] {
            case UInt8(ascii: "\""):
                return plainString() != nil
            case UInt8(ascii: "{"):
                at += 1
                if take(UInt8(ascii: "}")) { return true }
                repeat {
                    guard plainString() != nil, take(UInt8(ascii: ":")), skipValue(depth: depth + 1) else {
                        return false
                    }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "}"))
            case UInt8(ascii: "["):
                at += 1
                if take(UInt8(ascii: "]")) { return true }
                repeat {
                    guard skipValue(depth: depth + 1) else { return false }
                } while take(UInt8(ascii: ","))
                return take(UInt8(ascii: "]"))
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            default: return number() != nil
            }
        }

        private mutating func literal(_ word: StaticString) -> Bool {
            let length = word.utf8CodeUnitCount
            guard at + length <= bytes.count else { return false }
            for offset in 0..<length where bytes[at + offset] != word.utf8Start[offset] { return false }
            at += length
            return true
        }

        /// A number by JSON's grammar (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`): its bytes,
        /// and whether it has neither a fraction nor an exponent.
        mutating func number() -> (Range<Int>, isInteger: Bool)? {
            let start = at
            var end = at
            func digits() -> Int {
                let first = end
                while end < bytes.count, bytes[end] >= UInt8(ascii: "0"), bytes[end] <= UInt8(ascii: "9") { end += 1 }
                return end - first
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
            guard end < bytes.count else { return nil }
            if bytes[end] == UInt8(ascii: "0") {
                end += 1
            } else {
                guard digits() > 0 else { return nil }
            }
            var isInteger = true
            if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
                end += 1
                guard digits() > 0 else { return nil }
                isInteger = false
            }
            if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
                end += 1
                if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
                guard digits() > 0 else { return nil }
                isInteger = false
            }
            at = end
            return (start..<end, isInteger)
        }

        // MARK: Base64

        /// Canonical base64 of little-endian float32 values.
        static func base64Floats(_ text: UnsafeBufferPointer<UInt8>) -> [Float]? {
            guard text.count % 4 == 0 else { return nil }
            var padding = 0
            if text.last == UInt8(ascii: "=") {
                padding = text.count >= 2 && text[text.count - 2] == UInt8(ascii: "=") ? 2 : 1
            }
            let byteCount = text.count / 4 * 3 - padding
            guard byteCount % 4 == 0 else { return nil }
            var decoded = [UInt8](repeating: 0, count: byteCount + 2)
            var out = 0
            var index = 0
            while index < text.count {
                var quad: UInt32 = 0
                for offset in 0..<4 {
                    let byte = text[index + offset]
                    let value: UInt8
                    if byte == UInt8(ascii: "=") {
                        // Padding only in the last group's last places.
                        guard index + 4 == text.count, offset >= 4 - padding else { return nil }
                        value = 0
                    } else {
                        value = sextet[Int(byte)]
                        guard value != 0xFF else { return nil }
                    }
                    quad = quad << 6 | UInt32(value)
                }
                decoded[out] = UInt8(truncatingIfNeeded: quad >> 16)
                decoded[out + 1] = UInt8(truncatingIfNeeded: quad >> 8)
                decoded[out + 2] = UInt8(truncatingIfNeeded: quad)
                out += 3
                index += 4
            }
            // Bits after the last byte must be zero (a canonical encoding).
            for extra in byteCount..<out where decoded[extra] != 0 { return nil }
            return (0..<(byteCount / 4)).map { value in
                let b = value * 4
                let bits =
                    UInt32(decoded[b]) | UInt32(decoded[b + 1]) << 8 | UInt32(decoded[b + 2]) << 16
                    | UInt32(decoded[b + 3]) << 24
                return Float(bitPattern: bits)
            }
        }

        /// The value of each base64 character, 0xFF for every other byte.
        static let sextet: [UInt8] = {
            var table = [UInt8](repeating: 0xFF, count: 256)
            for (value, character) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8
                .enumerated()
            {
                table[Int(character)] = UInt8(value)
            }
            return table
        }()
    }
}
