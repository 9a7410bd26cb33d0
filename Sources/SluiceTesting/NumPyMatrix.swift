import Foundation

/// A matrix of 32-bit floats read from a NumPy `.npy` file (format versions 1 to 3, `<f4`, C order, one or
/// two dimensions), as `numpy.save` writes it: the benchmarks load real embeddings with it (the vectors of
/// `Benchmarks/ann`). A one-dimensional array is one row.
package struct NumPyMatrix: Sendable, Hashable {
    /// The rows, each `columns` floats.
    package var rows: [[Float]]
    /// Floats a row.
    package var columns: Int

    /// Why a file is not a matrix this reader takes.
    package struct FormatError: Error, CustomStringConvertible {
        package var description: String
    }

    /// Reads the file at `url`.
    package init(contentsOf url: URL) throws {
        try self.init(data: try Data(contentsOf: url))
    }

    /// Reads the bytes of a `.npy` file.
    package init(data: Data) throws {
        let bytes = [UInt8](data)
        guard bytes.count >= 10, bytes[0] == 0x93, Array(bytes[1..<6]) == Array("NUMPY".utf8) else {
            throw FormatError(description: "not a .npy file (no \\x93NUMPY magic)")
        }
        let major = bytes[6]
        let (headerLength, headerStart): (Int, Int)
        switch major {
        case 1: (headerLength, headerStart) = (Int(bytes[8]) | Int(bytes[9]) << 8, 10)
        case 2, 3:
            guard bytes.count >= 12 else { throw FormatError(description: "truncated .npy header") }
            (headerLength, headerStart) = ((8..<12).reduce(0) { $0 | Int(bytes[$1]) << (8 * ($1 - 8)) }, 12)
        default: throw FormatError(description: ".npy format version \(major) is not read")
        }
        guard bytes.count >= headerStart + headerLength else {
            throw FormatError(description: "truncated .npy header")
        }
        let header = String(decoding: bytes[headerStart..<headerStart + headerLength], as: UTF8.self)
        guard let descr = Self.value(of: "descr", in: header), descr == "'<f4'" else {
            throw FormatError(description: "only little-endian float32 ('<f4') is read, not \(header)")
        }
        guard Self.value(of: "fortran_order", in: header) == "False" else {
            throw FormatError(description: "only C order is read")
        }
        guard let shape = Self.shape(in: header), (1...2).contains(shape.count) else {
            throw FormatError(description: "only one or two dimensions are read, not \(header)")
        }
        let (count, columns) = shape.count == 2 ? (shape[0], shape[1]) : (1, shape[0])
        let start = headerStart + headerLength
        guard bytes.count - start == count * columns * 4 else {
            throw FormatError(
                description: "\(bytes.count - start) bytes of data for a \(count) × \(columns) float32 matrix"
            )
        }
        self.columns = columns
        self.rows = bytes.withUnsafeBytes { raw in
            (0..<count).map { row in
                (0..<columns).map { column in
                    Float(
                        bitPattern: UInt32(
                            littleEndian: raw.loadUnaligned(
                                fromByteOffset: start + (row * columns + column) * 4,
                                as: UInt32.self
                            )
                        )
                    )
                }
            }
        }
    }

    /// The text of `key`'s value in the header's Python dict, up to the next comma outside parentheses.
    private static func value(of key: String, in header: String) -> String? {
        guard let range = header.range(of: "'\(key)':") else { return nil }
        var depth = 0
        var value = ""
        for character in header[range.upperBound...] {
            if character == "(" { depth += 1 }
            if character == ")" { depth -= 1 }
            if depth == 0, character == "," || character == "}" { break }
            value.append(character)
            if depth == 0, character == ")" { break }
        }
        return value.trimmingCharacters(in: .whitespaces)
    }

    /// The `shape` tuple, e.g. `(98731, 384)` or `(384,)`.
    private static func shape(in header: String) -> [Int]? {
        guard let text = value(of: "shape", in: header), text.hasPrefix("("), text.hasSuffix(")") else { return nil }
        let parts = text.dropFirst().dropLast().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let numbers = parts.filter { !$0.isEmpty }.compactMap { Int($0) }
        return numbers.count == parts.filter({ !$0.isEmpty }).count ? numbers : nil
    }
}
