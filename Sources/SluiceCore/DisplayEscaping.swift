/// Text from outside (file names above all) made safe to print on a terminal or in a log line: control
/// characters can forge log lines (a line break) or drive the terminal (escape sequences), so they are
/// shown as escapes instead. The one helper for every place a document key, a path or a message built
/// from them is displayed; what is stored (checkpoint, sink) keeps the real text.
///
/// - C0 controls and DEL: `\n`, `\r`, `\t`, else `\xHH` (`\x1B` for ESC).
/// - C1 controls (U+0080–U+009F, which some terminals obey as ESC sequences): `\u{HH}`.
/// - Bytes that are not UTF-8 (in ``escaped(bytes:)``): `\xHH` for each.
///
/// Everything else, backslashes included, is kept as it is, so ordinary names read as themselves.
package enum DisplayEscaping {
    /// `text` with its control characters escaped.
    package static func escaped(_ text: some StringProtocol) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars { append(scalar, to: &out) }
        return out
    }

    /// Raw bytes (a file name as the file system holds it) as displayable text: valid UTF-8 as in
    /// ``escaped(_:)``, every byte of an invalid sequence as `\xHH`.
    package static func escaped(bytes: [UInt8]) -> String {
        var out = ""
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = bytes.makeIterator()
        var offset = 0  // the parser consumes the bytes in order: each result accounts for the next ones
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid(let encoded):
                append(Unicode.UTF8.decode(encoded), to: &out)
                offset += encoded.count
            case .error(let length):
                for byte in bytes[offset..<(offset + length)] { out += "\\x" + hex(byte) }
                offset += length
            case .emptyInput: return out
            }
        }
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String) {
        guard needsEscape(scalar) else {
            out.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default:
            let code = hex(UInt8(scalar.value))
            out += scalar.value < 0x80 ? "\\x\(code)" : "\\u{\(code)}"
        }
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}
