/// Writes a string as a JSON string literal, byte for byte as `JSONEncoder` writes it with
/// `.withoutEscapingSlashes`: `"` and `\` and the control characters below U+0020 are escaped (`\b`, `\f`,
/// `\n`, `\r`, `\t`, else `\u00xx` in lower-case hex); everything else, `/`, DEL and non-ASCII included, is
/// copied as UTF-8. Runs of bytes that need no escape are copied whole.
///
/// For the hot JSON of a run (request bodies of the remote embedders, the JSONL sink's records), where
/// `JSONSerialization` and `JSONEncoder` cost more than chunking (issue 19).
package enum JSONString {
    /// Appends `text` as a quoted JSON string to `bytes`.
    package static func append(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var start = 0
            for index in 0..<utf8.count {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<index]))
                appendEscape(of: byte, to: &bytes)
                start = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[start..<utf8.count]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(of byte: UInt8, to bytes: inout [UInt8]) {
        let short: UInt8? =
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): byte
            case 0x0A: UInt8(ascii: "n")
            case 0x0D: UInt8(ascii: "r")
            case 0x09: UInt8(ascii: "t")
            case 0x08: UInt8(ascii: "b")
            case 0x0C: UInt8(ascii: "f")
            default: nil
            }
        if let short {
            bytes.append(contentsOf: [UInt8(ascii: "\\"), short])
            return
        }
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [
            UInt8(ascii: "\\"), UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0xF)],
        ])
    }
}
