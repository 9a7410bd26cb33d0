import Foundation
import SluiceCore

/// A BPE rank table (token bytes → rank = token id), as in tiktoken's `.tiktoken` files: one
/// `base64(token) rank` per line.
///
/// Lookups happen in the merge loop for every adjacent pair, so tokens of up to 16 bytes (almost all)
/// are keyed by two packed integers instead of a byte array.
struct BPERanks: Sendable {
    private struct Packed: Hashable {
        var low: UInt64
        var high: UInt64
        var length: UInt8
    }

    private var small: [Packed: Int32] = [:]
    private var large: [[UInt8]: Int32] = [:]
    private(set) var count = 0

    init(contentsOf url: URL) throws {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw SluiceError(
                .configuration,
                "cannot read the BPE rank file \(url.path) (run scripts/setup.sh to fetch it): \(error.localizedDescription)"
            )
        }
        small.reserveCapacity(110_000)
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n")) where !line.isEmpty {
            lineNumber += 1
            guard let space = line.firstIndex(of: UInt8(ascii: " ")),
                let token = Data(base64Encoded: Data(line[line.startIndex..<space])),
                let rank = Int32(String(decoding: line[(space + 1)...], as: UTF8.self))
            else {
                throw SluiceError(.configuration, "\(url.path): line \(lineNumber) is not 'base64 rank'")
            }
            insert([UInt8](token), rank: rank)
        }
        guard count > 0 else { throw SluiceError(.configuration, "\(url.path) holds no ranks") }
    }

    private mutating func insert(_ bytes: [UInt8], rank: Int32) {
        count += 1
        if bytes.count <= 16 {
            bytes.withUnsafeBufferPointer { small[Self.pack($0[...])] = rank }
        } else {
            large[bytes] = rank
        }
    }

    /// The rank of a byte string, or nil when it is not a token.
    func rank(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Int32? {
        if bytes.count <= 16 { return small[Self.pack(bytes)] }
        return large[Array(bytes)]
    }

    private static func pack(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> Packed {
        var low: UInt64 = 0
        var high: UInt64 = 0
        for (offset, byte) in bytes.enumerated() {
            if offset < 8 {
                low |= UInt64(byte) << (8 * UInt64(offset))
            } else {
                high |= UInt64(byte) << (8 * UInt64(offset - 8))
            }
        }
        return Packed(low: low, high: high, length: UInt8(bytes.count))
    }
}
