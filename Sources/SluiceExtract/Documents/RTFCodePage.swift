/// Decodes an RTF document's 8-bit text (`\'hh` escapes and raw bytes) by the code page in force: the
/// document's (`\ansicpgN`, else `\ansi` 1252, `\mac` 10000, `\pc` 437, `\pca` 850) or the current
/// font's (`\fcharsetN` in the font table, ``codePage(charset:)``).
///
/// Windows-1252 is decoded here, by table. The other code pages go through the C library's iconv: the
/// single-byte Windows code pages 874 and 1250–1258, the DOS code pages 437, 850, 852 and 866, Mac Roman
/// (10000), and the double-byte East Asian code pages 932 (Shift JIS), 936 (GBK), 949 (Unified Hangul)
/// and 950 (Big5), whose two bytes come as two `\'hh` escapes in a row. A byte sequence the code page
/// does not define becomes U+FFFD; a code page iconv does not know is read as Windows-1252.
enum RTFCodePage {
    /// The code page of a font's `\fcharsetN` (nil: the document's).
    static func codePage(charset: Int) -> Int? {
        switch charset {
        case 0: 1252
        case 77: 10000
        case 128: 932
        case 129: 949
        case 134: 936
        case 136: 950
        case 161: 1253
        case 162: 1254
        case 163: 1258
        case 177: 1255
        case 178: 1256
        case 186: 1257
        case 204: 1251
        case 222: 874
        case 238: 1250
        case 254: 437
        default: nil  // 1 (default), 2 (symbol) and the rest: the document's code page
        }
    }

    /// The bytes' text in `codePage`.
    static func decode(_ bytes: [UInt8], codePage: Int) -> String {
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        if codePage == 1252 || codePage == 0 { return windows1252(bytes) }
        if codePage == 65001 { return String(decoding: bytes, as: UTF8.self) }
        let name = codePage == 10000 ? "MACINTOSH" : "CP\(codePage)"
        return Charset.decode(bytes, from: name).map { String(decoding: $0, as: UTF8.self) } ?? windows1252(bytes)
    }

    /// Windows-1252: Latin-1 but for 0x80–0x9F, which hold typographic characters (five are undefined).
    static func windows1252(_ bytes: [UInt8]) -> String {
        var scalars = String.UnicodeScalarView()
        for byte in bytes {
            if (0x80...0x9F).contains(byte) {
                let value = high1252[Int(byte) - 0x80]
                scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
            } else {
                scalars.append(Unicode.Scalar(byte))
            }
        }
        return String(scalars)
    }

    /// 0x80–0x9F of Windows-1252 (0xFFFD where it defines nothing).
    private static let high1252: [UInt32] = [
        0x20AC, 0xFFFD, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152,
        0xFFFD, 0x017D, 0xFFFD, 0xFFFD, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122,
        0x0161, 0x203A, 0x0153, 0xFFFD, 0x017E, 0x0178,
    ]
}
