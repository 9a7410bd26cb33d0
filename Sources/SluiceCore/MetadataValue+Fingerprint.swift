/// How a metadata value enters a document's fingerprint (``DocumentMetadataRules``): Sluice's own
/// encoding, written out here rather than left to the compiler's description of the value, whose form can
/// change with Swift and would then look like a change of every document's metadata.
///
/// Version 1 is, value for value, the text that Sluice wrote before it had its own encoding (the
/// description of ``jsonObject``), so that fingerprints kept in existing checkpoints stay equal: a string
/// as it is; an integer in decimal; a double as Swift prints it (the shortest text that reads back as the
/// same number); `true`/`false`; a time as RFC 3339 text; a list of strings as `["a", "b"]`, each element
/// quoted with `"`, `'` and `\` escaped by a backslash, `\0`, `\t`, `\n`, `\r`, the other ASCII control
/// characters as `\u{1B}` (two or more upper-case hex digits), every other character as it is.
extension MetadataValue {
    package var fingerprintText: String {
        switch self {
        case .string(let value): return value
        case .int(let value): return String(value)
        case .double(let value): return value.description
        case .bool(let value): return value ? "true" : "false"
        case .time: return text
        case .strings(let values): return "[" + values.map(Self.quoted).joined(separator: ", ") + "]"
        }
    }

    /// The letter of the value's kind, beside its text in a fingerprint (`"1"` and `1` differ).
    package var fingerprintKind: String {
        switch self {
        case .string: return "s"
        case .int: return "i"
        case .double: return "d"
        case .bool: return "b"
        case .time: return "t"
        case .strings: return "l"
        }
    }

    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "'", "\\": out += "\\" + String(scalar)
            case "\0": out += "\\0"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + (hex.count < 2 ? "0" + hex : hex) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
