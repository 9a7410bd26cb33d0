/// An RFC 4180 reader over bytes: fields split at a delimiter, records at line breaks (LF or CRLF),
/// quoted fields (`"…"`, with `""` for a quote) may hold delimiters and line breaks. One pass, no
/// backtracking.
struct CSVReader {
    /// A syntax error at a record.
    struct Failure: Error {
        var line: Int
        var message: String
    }

    let bytes: [UInt8]
    let delimiter: UInt8

    /// Calls `onRecord` with each record's fields and the line it starts on.
    func read(_ onRecord: (_ fields: [String], _ line: Int) throws -> Void) throws {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let end = bytes.count
        var line = 1
        var fields: [String] = []
        var recordLine = 1
        var field: [UInt8] = []
        while index < end {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") && field.isEmpty {
                // A quoted field: up to the closing quote, which must be followed by a delimiter or a line end.
                let quoteLine = line
                index += 1
                var closed = false
                while index < end {
                    let inner = bytes[index]
                    if inner == UInt8(ascii: "\"") {
                        if index + 1 < end && bytes[index + 1] == UInt8(ascii: "\"") {
                            field.append(inner)
                            index += 2
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    if inner == 0x0A { line += 1 }
                    field.append(inner)
                    index += 1
                }
                guard closed else { throw Failure(line: quoteLine, message: "a quoted field that starts on line \(quoteLine) is never closed") }
                if index < end, bytes[index] != delimiter, bytes[index] != 0x0A, bytes[index] != 0x0D {
                    throw Failure(line: line, message: "unexpected text after a closing quote on line \(line)")
                }
                continue
            }
            if byte == delimiter {
                fields.append(Self.decode(field))
                field.removeAll(keepingCapacity: true)
                index += 1
                continue
            }
            if byte == 0x0A || byte == 0x0D {
                fields.append(Self.decode(field))
                field.removeAll(keepingCapacity: true)
                try onRecord(fields, recordLine)
                fields.removeAll(keepingCapacity: true)
                index += (byte == 0x0D && index + 1 < end && bytes[index + 1] == 0x0A) ? 2 : 1
                line += 1
                recordLine = line
                continue
            }
            field.append(byte)
            index += 1
        }
        if !field.isEmpty || !fields.isEmpty {
            fields.append(Self.decode(field))
            try onRecord(fields, recordLine)
        }
    }

    private static func decode(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self)
    }
}
