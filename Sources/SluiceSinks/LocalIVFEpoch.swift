import CHNSW
import Foundation

/// One training of the IVF index: its centroids (unit vectors, `lists` × `dimensions` floats) and the
/// number of vectors the store held when it was trained (the retraining rule compares the store with it).
/// Stored under `centroids/<epoch>` in the `ivf` database: `lists` (`UInt32`), `dimensions` (`UInt32`),
/// `trainedOn` (`UInt64`), then the floats, all little-endian.
struct LocalIVFEpoch: Sendable {
    var epoch: UInt32
    var lists: Int
    var dimensions: Int
    var trainedOn: Int
    var centroids: [Float]

    init(epoch: UInt32, dimensions: Int, trainedOn: Int, centroids: [Float]) {
        self.epoch = epoch
        self.dimensions = dimensions
        self.lists = dimensions > 0 ? centroids.count / dimensions : 0
        self.trainedOn = trainedOn
        self.centroids = centroids
    }

    init?(epoch: UInt32, encoded bytes: [UInt8]) {
        guard bytes.count >= 16 else { return nil }
        let (lists, dimensions, trainedOn) = bytes.withUnsafeBytes {
            (
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self))),
                Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt32.self))),
                Int(UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
            )
        }
        guard lists > 0, dimensions > 0, bytes.count == 16 + lists * dimensions * 4 else { return nil }
        let centroids = bytes.withUnsafeBytes { raw in
            (0..<lists * dimensions).map { raw.loadUnaligned(fromByteOffset: 16 + $0 * 4, as: Float.self) }
        }
        self.init(epoch: epoch, dimensions: dimensions, trainedOn: trainedOn, centroids: centroids)
    }

    var encoded: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 + centroids.count * 4)
        withUnsafeBytes(of: UInt32(lists).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: UInt32(dimensions).littleEndian) { bytes += $0 }
        withUnsafeBytes(of: UInt64(trainedOn).littleEndian) { bytes += $0 }
        centroids.withUnsafeBytes { bytes += $0 }  // little-endian on every platform Sluice builds for
        return bytes
    }

    /// The list whose centroid is nearest to `vector` (largest inner product; the first on a tie).
    func nearest(_ vector: [Float]) -> UInt32 {
        var list: UInt32 = 0
        centroids.withUnsafeBufferPointer { rows in
            vector.withUnsafeBufferPointer {
                sluice_ivf_nearest(rows.baseAddress, lists, dimensions, $0.baseAddress, 1, &list)
            }
        }
        return list
    }

    /// The `count` lists whose centroids are nearest to `query`, nearest first (ties by list number).
    func nearest(_ query: [Float], count: Int) -> [UInt32] {
        var products = [Float](repeating: 0, count: lists)
        centroids.withUnsafeBufferPointer { rows in
            query.withUnsafeBufferPointer { q in
                products.withUnsafeMutableBufferPointer {
                    sluice_ivf_products(rows.baseAddress, lists, dimensions, q.baseAddress, $0.baseAddress)
                }
            }
        }
        let order = (0..<lists).sorted { products[$0] > products[$1] || (products[$0] == products[$1] && $0 < $1) }
        return order.prefix(count).map { UInt32($0) }
    }
}
