import Foundation

/// A strict JSON reader (RFC 8259) that never recurses: containers are kept on an explicit stack, so a
/// document nested 100,000 deep fails at the depth limit with a clear reason instead of overflowing the
/// thread's stack. It reports each string value with its JSON path (`$.items[3].body`), in document
/// order (Foundation's `JSONSerialization` loses the order of keys).
struct JSONScanner {
    /// One step of a JSON path.
    enum Step: Hashable {
        case key(String)
        case index(Int)
    }

    /// A syntax error or a limit, at a byte offset.
    struct Failure: Error {
        /// What went wrong, as far as a caller decides on it.
        enum Kind: Equatable {
            case syntax
            /// Nesting deeper than the limit.
            case tooDeep
            /// A whole value, ending at byte `valueEnd`, followed by more than white space (at `offset`).
            case trailingContent(valueEnd: Int)
        }

        var offset: Int
        var message: String
        var kind = Kind.syntax

        var tooDeep: Bool { kind == .tooDeep }
    }

    private enum Container {
        case object(key: String?)
        case array(index: Int)
    }

    let bytes: [UInt8]
    let maxDepth: Int

    /// Reads one JSON value that fills `bytes[range]` (white space around it allowed) and calls
    /// `onString` with the path and text of every string value (object keys are not values).
    func scan(_ range: Range<Int>, onString: (_ path: [Step], _ value: String) -> Void) throws(Failure) {
        var index = range.lowerBound
        let end = range.upperBound
        var stack: [Container] = []
        var path: [Step] = []

        func skipSpace() { skipWhitespace(&index, end: end) }
        func fail(_ message: String) -> Failure { Failure(offset: index, message: message) }
        func describe(_ at: Int) -> String {
            guard at < end else { return "end of input" }
            let byte = bytes[at]
            return byte >= 0x21 && byte < 0x7F
                ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
        }

        // Expecting a value at `index`.
        var expectValue = true
        // Where the last value (scalar or container) ended.
        var valueEnd = index
        while true {
            skipSpace()
            if expectValue {
                guard index < end else { throw fail("expected a value, found end of input") }
                switch bytes[index] {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    guard stack.count < maxDepth else {
                        throw Failure(offset: index, message: "nesting deeper than \(maxDepth) levels", kind: .tooDeep)
                    }
                    let isObject = bytes[index] == UInt8(ascii: "{")
                    index += 1
                    skipSpace()
                    if index < end, bytes[index] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        index += 1
                        valueEnd = index
                        expectValue = false
                    } else if isObject {
                        stack.append(.object(key: nil))
                        try readKey(&index, end: end, stack: &stack, path: &path)
                        continue
                    } else {
                        stack.append(.array(index: 0))
                        path.append(.index(0))
                        continue
                    }
                case UInt8(ascii: "\""):
                    let value = try readString(&index, end: end)
                    onString(path, value)
                    valueEnd = index
                    expectValue = false
                default:
                    try skipLiteral(&index, end: end)
                    valueEnd = index
                    expectValue = false
                }
            }
            // After a value: a separator, a closing bracket, or the end.
            skipSpace()
            guard let top = stack.last else {
                guard index == end else {
                    throw Failure(
                        offset: index,
                        message: "unexpected \(describe(index)) after the end of the JSON value",
                        kind: .trailingContent(valueEnd: valueEnd)
                    )
                }
                return
            }
            guard index < end else {
                throw fail("unexpected end of input inside \(Self.name(of: top)) (missing \(Self.closer(of: top)))")
            }
            let byte = bytes[index]
            switch top {
            case .object:
                if byte == UInt8(ascii: ",") {
                    index += 1
                    path.removeLast()
                    try readKey(&index, end: end, stack: &stack, path: &path)
                    expectValue = true
                } else if byte == UInt8(ascii: "}") {
                    index += 1
                    valueEnd = index
                    stack.removeLast()
                    path.removeLast()
                } else {
                    throw fail("expected ',' or '}' in an object, found \(describe(index))")
                }
            case .array(let position):
                if byte == UInt8(ascii: ",") {
                    index += 1
                    stack[stack.count - 1] = .array(index: position + 1)
                    path[path.count - 1] = .index(position + 1)
                    expectValue = true
                } else if byte == UInt8(ascii: "]") {
                    index += 1
                    valueEnd = index
                    stack.removeLast()
                    path.removeLast()
                } else {
                    throw fail("expected ',' or ']' in an array, found \(describe(index))")
                }
            }
        }
    }

    /// Skips JSON white space (space, tab, line feed, carriage return).
    private func skipWhitespace(_ index: inout Int, end: Int) {
        while index < end, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09
        {
            index += 1
        }
    }

    /// Reads `"key" :` and pushes the key on the path.
    private func readKey(_ index: inout Int, end: Int, stack: inout [Container], path: inout [Step]) throws(Failure) {
        skipWhitespace(&index, end: end)
        guard index < end, bytes[index] == UInt8(ascii: "\"") else {
            throw Failure(offset: index, message: "expected a string key in an object")
        }
        let key = try readString(&index, end: end)
        skipWhitespace(&index, end: end)
        guard index < end, bytes[index] == UInt8(ascii: ":") else {
            throw Failure(offset: index, message: "expected ':' after the key \"\(key)\"")
        }
        index += 1
        stack[stack.count - 1] = .object(key: key)
        path.append(.key(key))
    }

    /// Reads a string starting at the quote, decoding escapes (surrogate pairs included).
    private func readString(_ index: inout Int, end: Int) throws(Failure) -> String {
        let start = index
        index += 1
        var out: [UInt8] = []
        var runStart = index
        while true {
            guard index < end else { throw Failure(offset: start, message: "unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                out += bytes[runStart..<index]
                index += 1
                break
            }
            if byte < 0x20 { throw Failure(offset: index, message: "control character in a string (escape it)") }
            if byte != UInt8(ascii: "\\") {
                index += 1
                continue
            }
            out += bytes[runStart..<index]
            guard index + 1 < end else { throw Failure(offset: index, message: "unterminated escape") }
            let escaped = bytes[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try readHex(&index, end: end)
                if (0xD800..<0xDC00).contains(scalar), index + 1 < end, bytes[index] == UInt8(ascii: "\\"),
                    bytes[index + 1] == UInt8(ascii: "u")
                {
                    index += 2
                    let low = try readHex(&index, end: end)
                    scalar =
                        (0xDC00..<0xE000).contains(low) ? 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00) : 0xFFFD
                }
                UTF8.encode(Unicode.Scalar(scalar) ?? "\u{FFFD}") { out.append($0) }
            default:
                throw Failure(offset: index - 2, message: "invalid escape '\\\(Character(Unicode.Scalar(escaped)))'")
            }
            runStart = index
        }
        guard let text = String(validating: out, as: UTF8.self) else {
            throw Failure(offset: start, message: "string is not valid UTF-8")
        }
        return text
    }

    private func readHex(_ index: inout Int, end: Int) throws(Failure) -> UInt32 {
        guard index + 4 <= end else { throw Failure(offset: index, message: "truncated \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            guard let digit = Character(Unicode.Scalar(byte)).hexDigitValue else {
                throw Failure(offset: index, message: "invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        index += 4
        return value
    }

    /// Skips `true`, `false`, `null` or a number (validated).
    private func skipLiteral(_ index: inout Int, end: Int) throws(Failure) {
        for literal in ["true", "false", "null"] {
            let word = Array(literal.utf8)
            if index + word.count <= end, bytes[index..<index + word.count].elementsEqual(word) {
                index += word.count
                return
            }
        }
        let start = index
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let digitsStart = index
        while index < end, (0x30...0x39).contains(bytes[index]) { index += 1 }
        guard index > digitsStart else {
            let byte = start < end ? bytes[start] : 0
            let shown =
                byte >= 0x21 && byte < 0x7F
                ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
            throw Failure(offset: start, message: "unexpected \(shown), expected a value")
        }
        if bytes[digitsStart] == 0x30 && index - digitsStart > 1 {
            throw Failure(offset: start, message: "number with a leading zero")
        }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            let fraction = index
            while index < end, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard index > fraction else { throw Failure(offset: start, message: "number without digits after '.'") }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponent = index
            while index < end, (0x30...0x39).contains(bytes[index]) { index += 1 }
            guard index > exponent else { throw Failure(offset: start, message: "number without exponent digits") }
        }
    }

    private static func name(of container: Container) -> String {
        if case .object = container { return "an object" }
        return "an array"
    }

    private static func closer(of container: Container) -> String {
        if case .object = container { return "'}'" }
        return "']'"
    }

    /// `$.items[3].body`; keys that are not identifiers are quoted: `$["a key"]`.
    static func render(_ path: [Step]) -> String {
        var out = "$"
        for step in path {
            switch step {
            case .index(let index): out += "[\(index)]"
            case .key(let key):
                let plain =
                    !key.isEmpty && !(key.first?.isNumber ?? false)
                    && key.unicodeScalars.allSatisfy {
                        $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_" || $0 == "-"
                    }
                out += plain ? ".\(key)" : "[\"\(key.replacingOccurrences(of: "\"", with: "\\\""))\"]"
            }
        }
        return out
    }
}
