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
        try bytes.withUnsafeBufferPointer { buffer in try read(buffer, onRecord) }
    }

    private func read(
        _ bytes: UnsafeBufferPointer<UInt8>,
        _ onRecord: (_ fields: [String], _ line: Int) throws -> Void
    ) throws {
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        let end = bytes.count
        let quote = UInt8(ascii: "\"")
        var line = 1
        var recordLine = 1
        var fields: [String] = []
        var recordOpen = false
        while index < end {
            recordOpen = true
            var field: String
            if bytes[index] == quote {
                // A quoted field: up to the closing quote, which must be followed by a delimiter or a line end.
                let quoteLine = line
                index += 1
                var content: [UInt8] = []
                var runStart = index
                var closed = false
                while index < end {
                    let byte = bytes[index]
                    if byte == quote {
                        content.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                        if index + 1 < end && bytes[index + 1] == quote {
                            content.append(quote)
                            index += 2
                            runStart = index
                            continue
                        }
                        index += 1
                        closed = true
                        break
                    }
                    if byte == 0x0A { line += 1 }
                    index += 1
                }
                guard closed else {
                    throw Failure(
                        line: quoteLine,
                        message: "a quoted field that starts on line \(quoteLine) is never closed"
                    )
                }
                if index < end, bytes[index] != delimiter, bytes[index] != 0x0A, bytes[index] != 0x0D {
                    throw Failure(line: line, message: "unexpected text after a closing quote on line \(line)")
                }
                field = String(decoding: content, as: UTF8.self)
            } else {
                let start = index
                while index < end, bytes[index] != delimiter, bytes[index] != 0x0A, bytes[index] != 0x0D { index += 1 }
                field = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
            fields.append(field)
            guard index < end else { break }
            if bytes[index] == delimiter {
                index += 1
                if index == end { fields.append("") }
                continue
            }
            // A line end closes the record.
            index += (bytes[index] == 0x0D && index + 1 < end && bytes[index + 1] == 0x0A) ? 2 : 1
            line += 1
            try onRecord(fields, recordLine)
            fields.removeAll(keepingCapacity: true)
            recordOpen = false
            recordLine = line
        }
        if recordOpen && !fields.isEmpty { try onRecord(fields, recordLine) }
    }
}
