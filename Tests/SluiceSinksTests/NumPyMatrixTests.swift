import Foundation
import SluiceTesting
import Testing

/// The `.npy` reader the benchmarks load real embeddings with: the bytes `numpy.save` writes (format
/// versions 1 and 2, padded header, little-endian float32), and a refusal of what it does not read.
@Suite struct NumPyMatrixTests {
    /// A `.npy` file as NumPy writes it: magic, version, header length, the header padded with spaces and
    /// ended by a newline to a multiple of 64 bytes, then the data.
    static func file(header: String, floats: [Float], version: UInt8 = 1) -> Data {
        let prefix = version == 1 ? 10 : 12
        var text = header
        while (prefix + text.utf8.count + 1) % 64 != 0 { text += " " }
        text += "\n"
        var bytes: [UInt8] = [0x93] + Array("NUMPY".utf8) + [version, 0]
        let length = text.utf8.count
        let lengthBytes = version == 1 ? 2 : 4
        bytes += (0..<lengthBytes).map { UInt8((length >> (8 * $0)) & 0xFF) }
        bytes += Array(text.utf8)
        for value in floats { withUnsafeBytes(of: value.bitPattern.littleEndian) { bytes += $0 } }
        return Data(bytes)
    }

    @Test("a 2 × 3 float32 matrix in format 1 and in format 2 reads row by row")
    func readsRowsInBothVersions() throws {
        let floats: [Float] = [-1, -0.5, 0, 0.5, 1, 1.5]
        for version: UInt8 in [1, 2] {
            let matrix = try NumPyMatrix(
                data: Self.file(
                    header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                    floats: floats,
                    version: version
                )
            )
            #expect(matrix.columns == 3)
            #expect(matrix.rows == [[-1, -0.5, 0], [0.5, 1, 1.5]])
        }
    }

    @Test("a one-dimensional array is one row")
    func oneDimensionIsOneRow() throws {
        let matrix = try NumPyMatrix(
            data: Self.file(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", floats: [1.5, -2.25])
        )
        #expect(matrix.columns == 2)
        #expect(matrix.rows == [[1.5, -2.25]])
    }

    @Test(
        "other types, Fortran order, a short body and a file of another kind are refused",
        arguments: [
            file(header: "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1), }", floats: [1, 2]),
            file(header: "{'descr': '<f4', 'fortran_order': True, 'shape': (1, 2), }", floats: [1, 2]),
            file(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", floats: [1, 2, 3]),
            file(header: "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 2), }", floats: [1, 2, 3, 4]),
            Data("PK\u{03}\u{04} a zip, as an .npz is".utf8),
        ]
    )
    func refusesWhatItDoesNotRead(_ data: Data) {
        #expect(throws: NumPyMatrix.FormatError.self) { try NumPyMatrix(data: data) }
    }
}
