import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Character sets named outside the bytes (an HTTP `Content-Type`'s `charset=`, an HTML `<meta charset>`)
/// and decoding through the C library's iconv.
///
/// Names are read as browsers read them (the WHATWG Encoding Standard): Latin-1 and ASCII labels mean
/// windows-1252, which only adds printable characters in 0x80–0x9F; a label iconv does not know is
/// ignored, as browsers ignore a label they do not know.
enum Charset {
    /// The name to decode with for `label` (`UTF-8`, `windows-1252`, `WINDOWS-1251`, …); nil when the
    /// label names no character set this machine's iconv can decode.
    static func named(_ label: String) -> String? {
        let label = label.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\"", "'"]).lowercased()
        switch label {
        case "utf8", "utf-8", "unicode-1-1-utf-8": return "UTF-8"
        case "latin1", "iso-8859-1", "iso8859-1", "iso_8859-1", "l1", "us-ascii", "ascii", "cp819", "ibm819":
            return "windows-1252"
        default:
            guard !label.isEmpty, label.utf8.count <= 40,
                label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "-_:.".contains($0)) })
            else { return nil }
            let name = label.uppercased()
            let converter = iconv_open("UTF-8", name)
            guard let converter, converter != iconv_t(bitPattern: -1) else { return nil }
            iconv_close(converter)
            return name
        }
    }

    /// `bytes` as UTF-8 when `declared` names another character set this machine can decode, with the
    /// name it was decoded from; `bytes` unchanged (and nil) when nothing is declared, the declaration is
    /// UTF-8 or unknown, or the bytes start with a UTF-8 byte-order mark (which outranks a declaration).
    static func utf8(_ bytes: [UInt8], declared: String?) -> (bytes: [UInt8], decodedFrom: String?) {
        guard let declared, let name = named(declared), name != "UTF-8",
            !bytes.starts(with: [0xEF, 0xBB, 0xBF])
        else { return (bytes, nil) }
        guard let decoded = decode(bytes, from: name) else { return (bytes, nil) }
        return (decoded, name)
    }

    /// Decodes `bytes` from the character set `name` into UTF-8 bytes through iconv, a byte it cannot
    /// convert becoming U+FFFD; nil when iconv does not know `name`.
    static func decode(_ bytes: [UInt8], from name: String) -> [UInt8]? {
        let converter = iconv_open("UTF-8", name)
        guard let converter, converter != iconv_t(bitPattern: -1) else { return nil }
        defer { iconv_close(converter) }
        var input = bytes.map { CChar(bitPattern: $0) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var buffer = [CChar](repeating: 0, count: 4 * min(bytes.count, 1 << 20) + 16)
        var offset = 0
        while offset < input.count {
            let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
                buffer.withUnsafeMutableBufferPointer { outputBuffer in
                    var inPointer: UnsafeMutablePointer<CChar>? = inputBuffer.baseAddress! + offset
                    var inLeft = inputBuffer.count - offset
                    var outPointer: UnsafeMutablePointer<CChar>? = outputBuffer.baseAddress!
                    var outLeft = outputBuffer.count
                    let result = iconv(converter, &inPointer, &inLeft, &outPointer, &outLeft)
                    let failure = result == Int(bitPattern: UInt(bitPattern: -1)) ? errno : 0
                    let written = outputBuffer.count - outLeft
                    output += UnsafeRawBufferPointer(start: outputBuffer.baseAddress, count: written)
                    offset = inputBuffer.count - inLeft
                    return failure
                }
            }
            // E2BIG: the buffer is full; go on with the rest. Anything else (a byte the character set
            // does not define, a sequence cut at the end): U+FFFD for one byte, and the shift state reset.
            if status != 0 && status != E2BIG && offset < input.count {
                output += [0xEF, 0xBF, 0xBD]
                offset += 1
                _ = iconv(converter, nil, nil, nil, nil)
            }
        }
        input.removeAll()
        return output
    }
}
