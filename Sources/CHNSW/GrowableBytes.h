// A byte buffer that grows with `realloc` (FileGraph.cpp's product-quantized codes). Internal to CHNSW.
//
// `std::vector::reserve` allocates the larger block, copies and frees the old one: for the moment of the copy both
// are resident. The file graph's codes (96 bytes a label, 13 MB at 135,000 labels) grow by an eighth at a time, so
// each growth held about 2.1× the codes: at the 10× corpus's load that moment was the run's peak RSS (12.1 and
// 13.6 MB blocks live together; session 41, an allocation probe's backtraces). glibc's `realloc` of a block mapped
// on its own (above `M_MMAP_THRESHOLD`, a fixed 128 KB in `sluice`) moves its pages with `mremap`: no copy, no
// second block. Below the threshold it copies as the vector did.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace sluice_chnsw {

class GrowableBytes {
public:
    GrowableBytes() = default;
    GrowableBytes(const GrowableBytes &) = delete;
    GrowableBytes &operator=(const GrowableBytes &) = delete;
    ~GrowableBytes() { std::free(bytes); }

    uint8_t *data() { return bytes; }
    const uint8_t *data() const { return bytes; }
    size_t size() const { return count; }
    size_t capacity() const { return room; }
    uint8_t &operator[](size_t at) { return bytes[at]; }
    const uint8_t &operator[](size_t at) const { return bytes[at]; }

    /// Room for `wanted` bytes at least (never shrinks); the bytes held keep their values.
    void reserve(size_t wanted)
    {
        if (wanted <= room) return;
        void *grown = std::realloc(bytes, wanted);
        if (grown == nullptr) throw std::bad_alloc();
        bytes = static_cast<uint8_t *>(grown);
        room = wanted;
    }

    /// `wanted` bytes held: the new ones zero, the old ones kept (a smaller size keeps the room).
    void resize(size_t wanted)
    {
        reserve(wanted);
        if (wanted > count) std::memset(bytes + count, 0, wanted - count);
        count = wanted;
    }

    /// `wanted` bytes held, every one zero.
    void assignZeros(size_t wanted)
    {
        reserve(wanted);
        if (wanted > 0) std::memset(bytes, 0, wanted);
        count = wanted;
    }

private:
    uint8_t *bytes = nullptr;
    size_t count = 0, room = 0;
};

}  // namespace sluice_chnsw
