import Foundation
import SluiceCore

/// A `.safetensors` file mapped read-only into memory: an 8-byte little-endian header length, a JSON
/// header (`name → {dtype, shape, data_offsets}`), then the tensors' bytes. Only `F32` tensors are
/// read; they are used in place, never copied, for as long as the file object lives.
final class SafetensorsFile: @unchecked Sendable {
    // Immutable after init; the mapping is read-only and unmapped in deinit only.
    struct Tensor {
        var shape: [Int]
        var dtype: String
        /// Byte range within the data section.
        var begin: Int
        var end: Int
    }

    let path: String
    let tensors: [String: Tensor]
    private let base: UnsafeRawPointer
    private let length: Int
    private let dataStart: Int

    /// Maps `url` and reads its header.
    /// - Throws: ``SluiceError/Code/configuration`` for a file that is missing, truncated or malformed.
    init(url: URL) throws {
        path = url.path
        let fd = open(url.path, O_RDONLY)
        guard fd >= 0 else {
            throw SluiceError(.configuration, "cannot open \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size >= 8 else {
            throw SluiceError(.configuration, "\(url.path) is not a safetensors file (too short)")
        }
        let length = Int(info.st_size)
        guard let mapped = mmap(nil, length, PROT_READ, MAP_PRIVATE, fd, 0), mapped != MAP_FAILED else {
            throw SluiceError(.configuration, "cannot map \(url.path): \(String(cString: strerror(errno)))")
        }
        let base = UnsafeRawPointer(mapped)
        do {
            let headerLength = Int(UInt64(littleEndian: base.loadUnaligned(as: UInt64.self)))
            guard headerLength > 0, headerLength <= length - 8 else {
                throw SluiceError(.configuration, "\(url.path): header length \(headerLength) exceeds the file")
            }
            let header = Data(bytes: base + 8, count: headerLength)
            tensors = try Self.parseHeader(header, dataLength: length - 8 - headerLength, path: url.path)
            dataStart = 8 + headerLength
        } catch {
            munmap(mapped, length)
            throw error
        }
        self.base = base
        self.length = length
    }

    deinit { munmap(UnsafeMutableRawPointer(mutating: base), length) }

    /// A float tensor of the expected shape, in place in the mapping.
    /// - Throws: ``SluiceError/Code/configuration`` when the tensor is missing, not F32, of another
    ///   shape, or misaligned.
    func floats(_ name: String, shape: [Int]) throws -> UnsafePointer<Float> {
        guard let tensor = tensors[name] else {
            throw SluiceError(.configuration, "\(path) has no tensor \(name)")
        }
        guard tensor.dtype == "F32" else {
            throw SluiceError(.configuration, "\(path): tensor \(name) is \(tensor.dtype); only F32 is supported")
        }
        guard tensor.shape == shape else {
            throw SluiceError(.configuration, "\(path): tensor \(name) has shape \(tensor.shape), expected \(shape)")
        }
        let address = base + dataStart + tensor.begin
        guard Int(bitPattern: address) % MemoryLayout<Float>.alignment == 0 else {
            throw SluiceError(.configuration, "\(path): tensor \(name) is not 4-byte aligned")
        }
        return address.assumingMemoryBound(to: Float.self)
    }

    private static func parseHeader(_ data: Data, dataLength: Int, path: String) throws -> [String: Tensor] {
        guard let object = try? JSONSerialization.jsonObject(with: data), let entries = object as? [String: Any] else {
            throw SluiceError(.configuration, "\(path): the safetensors header is not a JSON object")
        }
        var tensors: [String: Tensor] = [:]
        for (name, value) in entries where name != "__metadata__" {
            guard let entry = value as? [String: Any], let dtype = entry["dtype"] as? String,
                let shape = entry["shape"] as? [Int], let offsets = entry["data_offsets"] as? [Int],
                offsets.count == 2
            else {
                throw SluiceError(.configuration, "\(path): malformed header entry for \(name)")
            }
            let elementSize =
                ["F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "F64": 8, "U8": 1, "I8": 1][dtype] ?? 0
            let begin = offsets[0]
            let end = offsets[1]
            guard begin >= 0, begin <= end, end <= dataLength,
                elementSize == 0 || shape.reduce(1, *) * elementSize == end - begin
            else {
                throw SluiceError(
                    .configuration,
                    "\(path): tensor \(name) has data offsets \(offsets) outside the file or not matching its shape"
                )
            }
            tensors[name] = Tensor(shape: shape, dtype: dtype, begin: begin, end: end)
        }
        return tensors
    }
}
