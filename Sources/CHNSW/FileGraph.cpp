// See HNSWIndex.h ("The graph with its nodes in a file").
//
// HNSW's published algorithm (Malkov and Yashunin), as Benchmarks/ann/hnsw_pread.cpp measured it (session 31):
// each element gets a level from its label; a search descends greedily through the upper layers, kept in
// memory, then runs a beam search of breadth ef at level 0; an insert searches each of its layers with
// ef_construction, chooses M neighbours with the neighbour-selection heuristic, links itself to them, and each
// neighbour whose list is full re-chooses its list with the same heuristic. The vectors are the store's 8-bit
// codes (Quantizer.h), scored by the same run-time-dispatched kernels as the hnswlib graph.
//
// Product-quantized codes (session 33; ProductQuantizer.h, DiskANN's navigation): once the graph holds
// `codesAt()` labels (`codesFrom`, or fewer if their records would not fit `residentBytes`; session 35),
// codebooks are trained by k-means on their 8-bit vectors (at most 4,096 of them) and every label gets a code
// of `codeM` bytes, kept in memory. Until then every record is held in memory too (`early`), and searches
// and inserts score every node they meet exactly, as the graph in memory does. From then on a search or an
// insert descends the upper layers by codes alone (no read), and its level-0 beam ranks candidates by their codes
// and reads only the nodes it expands (one pread of the record: list and 8-bit vector), which are returned
// nearest first by their 8-bit vectors; an insert's neighbour selection and the prune of a full list use the
// 8-bit vectors read (exact, as before), and linking back to a chosen neighbour uses the record its search read.
// An insert at level ≥ 1 (6% of them) searches and links its upper layers by codes alone too: beams ranked by
// codes, the heuristic and a full list's prune over decoded codes (no read; the harness's way).
//
// The file: a header (`Header`, the first 4 KB), then one record a label, in label order —
//   u32 count                 the level-0 list's length; bit 31 is the tombstone (a deleted label)
//   u32 links[2M]             the level-0 list
//   f32 scale, i8 values[d]   the 8-bit vector
// (520 bytes at 384 d and M 16) — then the upper section: one byte a label (its level, 0x80 if deleted, 0xFF if
// the label is not in the graph), then the upper-layer lists of the labels above level 0 in label order (each
// level a count and M ids), then, once trained, the float centroids (256 × d) and every slot's code. The header is
// written last; it carries the checksums of itself and of the upper section. In memory: the level bytes, the upper
// lists (about 7 bytes a label at M 16) and the codes. Format version 1 (no codes) is refused: the store builds again.
//
// Writes never go to a named file: a new graph works in an unnamed file of its folder (O_TMPFILE), a loaded one
// copies its file into one at its first write (copy_file_range). A save writes the upper section and the
// header, fdatasyncs and links the working file under the caller's name; the next write makes a new copy.
#include "HNSWIndex.h"
#include "GrowableBytes.h"
#include "Guarded.h"
#include "NodeLocks.h"
#include "ProductQuantizer.h"
#include "Quantizer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

using sluice_chnsw::GrowableBytes;
using sluice_chnsw::guarded;
using sluice_chnsw::NodeLock;
using sluice_chnsw::NodeLocks;
using sluice_chnsw::ProductQuantizer;
using sluice_chnsw::QuantizedSpaceParameters;
using sluice_chnsw::scaleBytes;

namespace {

constexpr char magic[8] = {'S', 'L', 'U', 'I', 'C', 'E', 'F', 'G'};
constexpr uint32_t formatVersion = 2;  // 2: product-quantized codes in the upper section (session 33)
constexpr uint32_t quantizerVersion = 1;  // Quantizer.h's codes: a float scale, then ±127 signed bytes
constexpr size_t headerBytes = 4096;
constexpr uint32_t tombstone = 0x8000'0000u;
constexpr uint8_t absent = 0xFF, deletedFlag = 0x80, levelMask = 0x7F;
constexpr int highestLevel = 100;

struct Header {
    char magic[8];
    uint32_t version, quantizer, dimensions, m, recordBytes, codeBytes;  // codeBytes: PQ code bytes (0: none)
    uint64_t slots, capacity, present, deleted;
    int64_t entry, topLevel;
    uint64_t upperOffset, upperBytes, upperChecksum;
    uint64_t codesFrom, codebookFloats;  // codebookFloats: 0 until the codebooks are trained
    uint64_t checksum;                   // of every byte before it
};
constexpr size_t versionOffset = 8;  // where every format version keeps its version
constexpr size_t pqIterations = 10;
constexpr uint64_t pqSeed = 0x9E0C0DE5;
static_assert(sizeof(Header) <= headerBytes, "the header fits its page");

uint64_t fnv1a(const void *bytes, size_t count, uint64_t hash = 0xcbf29ce484222325ull)
{
    const uint8_t *p = static_cast<const uint8_t *>(bytes);
    for (size_t i = 0; i < count; i++) {
        hash ^= p[i];
        hash *= 0x100000001b3ull;
    }
    return hash;
}

std::runtime_error systemError(const std::string &what)
{
    return std::runtime_error(what + ": " + std::strerror(errno));
}

void readExactly(int fd, void *out, size_t count, size_t offset)
{
    char *to = static_cast<char *>(out);
    while (count > 0) {
        ssize_t got = pread(fd, to, count, off_t(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) throw systemError("cannot read the node file");
        if (got == 0) throw std::runtime_error("the node file is cut short");
        to += got;
        count -= size_t(got);
        offset += size_t(got);
    }
}

void writeExactly(int fd, const void *in, size_t count, size_t offset)
{
    const char *from = static_cast<const char *>(in);
    while (count > 0) {
        ssize_t put = pwrite(fd, from, count, off_t(offset));
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) throw systemError("cannot write the node file");
        from += put;
        count -= size_t(put);
        offset += size_t(put);
    }
}

// A scored node: its distance to the query, its id, and where its record is in the search's pool.
struct Scored {
    float distance;
    uint32_t id;
    uint32_t slot;
    bool operator<(const Scored &other) const { return distance < other.distance; }
    bool operator>(const Scored &other) const { return distance > other.distance; }
};

// One search's or insert's working memory: the visited bitset and the records read.
struct Scratch {
    std::vector<uint64_t> visited;
    std::vector<uint32_t> touched;
    std::vector<char> pool;
    std::vector<const char *> held;  // a slot's record in the graph's memory (session 35: not copied), or null
    std::vector<uint32_t> writesSeen;  // inserts side by side: its lock's count of list writes when a slot was read
    size_t used = 0, recordBytes;
    std::vector<Scored> candidates, found, chosen, pruneCandidates, pruneChosen, expanded;
    std::vector<float> table;     // the query's (or inserted vector's) dot products with every centroid
    std::vector<uint32_t> links, list, level0List;
    std::vector<char> pruneRecords;
    std::vector<char> decoded;          // codes decoded into 8-bit vectors (upper-layer inserts)
    std::vector<float> decodeFloats;
    std::vector<uint64_t> known;        // an insert's read records: (id << 32 | pool slot), sorted (the prunes')
    std::vector<uint64_t> decodedIds;   // the codes in `decoded`: (id << 32 | its slot), sorted

    Scratch(size_t slots, size_t recordBytes) : visited((slots + 63) / 64), recordBytes(recordBytes) {}

    // Ready for a search of a graph of `slots` slots (a kept scratch: the graph may have grown since).
    void prepare(size_t slots)
    {
        if (visited.size() < (slots + 63) / 64) visited.resize((slots + 63) / 64, 0);
        used = 0;
    }
    // Bytes held (capacities).
    size_t bytes() const
    {
        return sizeof(Scratch) + visited.capacity() * 8 + touched.capacity() * 4 + pool.capacity() +
            (candidates.capacity() + found.capacity() + chosen.capacity() + pruneCandidates.capacity() +
                pruneChosen.capacity() + expanded.capacity()) * sizeof(Scored) +
            held.capacity() * sizeof(const char *) + writesSeen.capacity() * 4 + table.capacity() * 4 +
            (links.capacity() + list.capacity() + level0List.capacity()) * 4 +
            pruneRecords.capacity() + decoded.capacity() + decodeFloats.capacity() * 4;
    }

    bool visit(uint32_t id)
    {
        uint64_t &word = visited[id / 64];
        const uint64_t bit = uint64_t(1) << (id % 64);
        if (word & bit) return false;
        if (word == 0) touched.push_back(id / 64);
        word |= bit;
        return true;
    }
    void clearVisited()
    {
        for (uint32_t w : touched) visited[w] = 0;
        touched.clear();
    }
    uint32_t slot()
    {
        if ((used + 1) * recordBytes > pool.size()) pool.resize(std::max<size_t>(64, 2 * (used + 1)) * recordBytes);
        if (used + 1 > held.size()) {
            held.resize(std::max<size_t>(64, 2 * (used + 1)));
            writesSeen.resize(held.size());
        }
        held[used] = nullptr;
        return uint32_t(used++);
    }
    // Slot `slot`'s record: where the graph holds it in memory (`held`, valid while the caller holds the graph's
    // lock: written only by inserts, which hold it alone), else its copy in the pool.
    const char *record(uint32_t slot) const
    {
        return held[slot] != nullptr ? held[slot] : pool.data() + size_t(slot) * recordBytes;
    }
    char *poolRecord(uint32_t slot) { return pool.data() + size_t(slot) * recordBytes; }
};

// Adds `scored` to `found` (a max-heap by distance) and drops the farthest if it holds more than `ef`.
void keepBest(std::vector<Scored> &found, const Scored &scored, size_t ef)
{
    found.push_back(scored);
    std::push_heap(found.begin(), found.end());
    if (found.size() > ef) {
        std::pop_heap(found.begin(), found.end());
        found.pop_back();
    }
}

size_t grownCapacity(size_t current, size_t needed)
{
    return std::max(needed, current + std::max<size_t>(current / 8, 1024));
}

}  // namespace

struct SluiceFileGraph {
    size_t dimensions, m, m0, efConstruction, codeBytes, codeOffset, recordBytes;
    std::string directory;
    int fd = -1;
    bool working = false;  // whether `fd` is this graph's unnamed working file (else a saved file, read only)
    std::vector<uint8_t> nodes;  // a byte a label: its level, `deletedFlag`, or `absent`
    size_t capacity = 0;
    std::unordered_map<uint32_t, std::vector<uint32_t>> upper;  // levels 1...level: a count and M ids each
    int64_t entry = -1;
    int topLevel = -1;
    size_t present = 0, deleted = 0;
    // Product-quantized codes (DiskANN's navigation): `codeM` bytes a label in memory, trained from the graph's
    // first `codesAt()` nodes; until then (`coded` false) every node a search scores is read (from `early`,
    // below, which holds them all until then).
    size_t codeM = 0, codesFrom = 0;
    bool coded = false;
    ProductQuantizer pq;
    GrowableBytes codes;  // codeM bytes a slot, once coded (grown in place: GrowableBytes.h)
    // Records held in memory as well as in the file (`early`), held while every record fits `residentBytes`
    // and before the codes are trained (session 35): a graph that small searches and inserts as the graph in
    // memory does — every node it scores read from memory and scored exactly, no codebooks to train — and a
    // reader that loads it reads its records once. The codes are trained when the graph outgrows the budget
    // (`codesAt()`), and the records are let go then. (Session 34 held only the first 4,096 records until a
    // training at 4,096: 574 → 102 µs an insert.) They are read and written there, and written to the file in
    // one write when they are let go and at a save (`flushHeld`; written through at every insert before: 14% of
    // a small build's CPU): the working file is unnamed — a `kill -9` leaves nothing of it — so the file needs
    // them only then, and saves, crashes and the change log's catch-up are unchanged.
    std::vector<char> early;
    std::atomic<bool> heldDirty{false};  // `early` holds writes the file does not have yet
    static constexpr size_t earlyLimit = 4096;      // records held before the training whatever their size
    size_t residentBytes = SLUICE_FGRAPH_RESIDENT_BYTES;  // 16,131 records at 384 d and M 16
    static constexpr size_t trainingSample = 4096;  // the codebooks' k-means sample, at most
    sluice_chnsw::Distance kernel;
    QuantizedSpaceParameters parameters;
    double levelMultiplier;
    std::shared_mutex lock;
    // Inserts side by side (session 37; `sluice_fgraph_add` with more than one thread, under `lock` held alone):
    // `locks` the nodes' locks for the batch (null when one thread inserts, and for searches, which never run
    // beside inserts), `entryLock` the entry point's (held by an insert that raises the top level for its whole
    // insert, as hnswlib's `global`).
    const NodeLocks *locks = nullptr;
    std::mutex entryLock;
    // Searches' scratches kept for the next searches (session 34): a search that made its own allocated its
    // table, visited bitset and record pool each time (with Sluice's 128 KB mmap threshold the pool at ef 128,
    // 138 KB, was mapped and unmapped a search). At most `spareScratches` kept, none larger than
    // `spareScratchBytes`; counted by sluice_fgraph_memory_bytes.
    static constexpr size_t spareScratches = 4, spareScratchBytes = 1 << 20;
    std::mutex spareLock;
    std::vector<std::unique_ptr<Scratch>> spare;

    // A scratch for a search (a kept one if any), ready for the graph as it is (call under `lock`).
    std::unique_ptr<Scratch> takeScratch()
    {
        std::unique_ptr<Scratch> s;
        {
            std::lock_guard<std::mutex> guard(spareLock);
            if (!spare.empty()) {
                s = std::move(spare.back());
                spare.pop_back();
            }
        }
        if (!s) s = std::make_unique<Scratch>(slots(), recordBytes);
        s->prepare(slots());
        return s;
    }
    // Keeps `s` for a later search unless enough are kept or it grew too large.
    void giveBack(std::unique_ptr<Scratch> s)
    {
        if (s->bytes() > spareScratchBytes) return;
        std::lock_guard<std::mutex> guard(spareLock);
        if (spare.size() < spareScratches) spare.push_back(std::move(s));
    }
    size_t spareBytes()
    {
        std::lock_guard<std::mutex> guard(spareLock);
        size_t bytes = 0;
        for (const auto &s : spare) bytes += s->bytes();
        return bytes;
    }

    SluiceFileGraph(std::string directory, size_t dimensions, size_t m, size_t efConstruction)
        : dimensions(dimensions), m(m), m0(2 * m), efConstruction(efConstruction),
          codeBytes(scaleBytes + dimensions), codeOffset(4 + 4 * 2 * m), recordBytes(codeOffset + codeBytes),
          directory(std::move(directory)), kernel(sluice_chnsw::chosenDistance()), parameters{dimensions},
          levelMultiplier(1 / std::log(double(m)))
    {
    }
    ~SluiceFileGraph()
    {
        if (fd >= 0) close(fd);
    }

    size_t slots() const { return nodes.size(); }

    // Whether the bytes at [offset, offset + count) of the file are held in `early`.
    bool inEarly(size_t count, size_t offset) const
    {
        return offset >= headerBytes && offset + count <= headerBytes + early.size();
    }
    // A node's bytes, from `early` if it holds them, else from the file.
    void readNode(void *out, size_t count, size_t offset) const
    {
        if (inEarly(count, offset)) {
            std::memcpy(out, early.data() + (offset - headerBytes), count);
            return;
        }
        readExactly(fd, out, count, offset);
    }
    // A node's bytes written to `early` if it holds them (to the file when it lets them go or at a save:
    // `flushHeld`), else to the file.
    void writeNode(const void *in, size_t count, size_t offset)
    {
        if (inEarly(count, offset)) {
            std::memcpy(early.data() + (offset - headerBytes), in, count);
            heldDirty = true;
            return;
        }
        writeExactly(fd, in, count, offset);
    }
    // The held records written to the file (one write), if any changed since they were last written.
    void flushHeld()
    {
        if (!heldDirty) return;
        if (!early.empty()) writeExactly(fd, early.data(), early.size(), headerBytes);
        heldDirty = false;
    }
    // The number of labels at which the codes are trained: `codesFrom`, or fewer when their records would not
    // fit `residentBytes` (but at least `earlyLimit`).
    size_t codesAt() const { return std::min(codesFrom, std::max(earlyLimit, residentBytes / recordBytes)); }
    // The slots whose records `early` should hold now: every slot while the records fit the budget, the first
    // `codesAt()` while the codes are not trained, else none.
    size_t heldSlots() const
    {
        if (slots() * recordBytes <= residentBytes) return slots();
        if (coded || codeM == 0) return 0;
        return std::min(slots(), codesAt());
    }
    // `early` made to hold `heldSlots()`: the slots it lacks read from the file (those it has records for), or
    // let go.
    void syncHeld()
    {
        const size_t want = heldSlots(), had = early.size() / recordBytes;
        if (want < had) flushHeld();  // what is let go is read from the file from now on
        if (want == 0) {
            if (early.capacity() > 0) std::vector<char>().swap(early);
            return;
        }
        if (want <= had) {
            if (want < had) early.resize(want * recordBytes);
            return;
        }
        // Room for the most it can hold, reserved at once (pages untouched until used): no copy as it grows.
        const size_t most = std::max(residentBytes / recordBytes, coded || codeM == 0 ? 0 : codesAt());
        if (early.capacity() < want * recordBytes) early.reserve(std::max(want, most) * recordBytes);
        early.resize(want * recordBytes, 0);
        // Runs of present slots read at once (a loaded graph's records); a slot absent is never read. A read
        // that fails holds none of them (none is held half read).
        try {
            for (size_t slot = had; slot < want;) {
                if (nodes[slot] == absent) {
                    slot++;
                    continue;
                }
                size_t end = slot + 1;
                while (end < want && nodes[end] != absent) end++;
                readExactly(fd, early.data() + slot * recordBytes, (end - slot) * recordBytes, offsetOf(uint32_t(slot)));
                slot = end;
            }
        } catch (...) {
            early.resize(had * recordBytes);  // the records held before (and their writes) stay
            throw;
        }
    }
    size_t offsetOf(uint32_t id) const { return headerBytes + size_t(id) * recordBytes; }
    bool isPresent(uint32_t id) const { return id < nodes.size() && nodes[id] != absent; }
    int levelOf(uint32_t id) const { return nodes[id] & levelMask; }
    float distance(const char *a, const char *b) const { return kernel(a, b, &parameters); }

    // The level of `id`: ⌊−ln(u) / ln M⌋ for u uniform in (0, 1], from the label alone (SplitMix64).
    int randomLevel(uint32_t id) const
    {
        uint64_t z = uint64_t(id) * 0x2545F4914F6CDD1Dull + 0x5EED + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        double u = (double(z >> 11) + 1) / 9007199254740992.0;
        return std::min(highestLevel, int(-std::log(u) * levelMultiplier));
    }

    // The working file, made at the first write: an unnamed file in the folder, holding a copy of the loaded
    // file if there is one.
    void ensureWorking()
    {
        if (working) return;
        int copy = open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC | O_NOATIME, 0644);
        if (copy < 0) throw systemError("cannot make the graph's working file in " + directory);
        if (fd >= 0) {
            struct stat info;
            if (fstat(fd, &info) != 0) {
                close(copy);
                throw systemError("cannot read the node file's size");
            }
            loff_t from = 0, to = 0;
            size_t left = size_t(info.st_size);
            while (left > 0) {
                ssize_t copied = copy_file_range(fd, &from, copy, &to, left, 0);
                if (copied < 0 && errno == EINTR) continue;
                if (copied <= 0) {
                    close(copy);
                    throw systemError("cannot copy the node file into the working file");
                }
                left -= size_t(copied);
            }
            close(fd);
        }
        fd = copy;
        working = true;
        posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        syncHeld();
    }

    void grow(size_t neededSlots)
    {
        if (neededSlots > capacity) {
            capacity = grownCapacity(capacity, neededSlots);
            nodes.reserve(capacity);
            if (coded) codes.reserve(capacity * codeM);
        }
        if (neededSlots > nodes.size()) nodes.resize(neededSlots, absent);
        if (coded && codes.size() < nodes.size() * codeM) codes.resize(nodes.size() * codeM);
        syncHeld();
    }

    // The largest number of code bytes up to `requested` whose sub-vectors are a whole multiple of 4 dimensions
    // (the table's kernels sum groups of 4); 0 if none.
    static size_t fittingCodeBytes(size_t dimensions, size_t requested)
    {
        for (size_t bytes = std::min(requested, dimensions / 4); bytes > 0; bytes--)
            if (dimensions % (4 * bytes) == 0) return bytes;
        return 0;
    }

    // Trains the codebooks on the graph's nodes (their 8-bit vectors read from the file; at most `codesFrom`
    // and `trainingSample` of them, evenly spread) and encodes every node.
    void trainCodes()
    {
        std::vector<uint32_t> ids;
        ids.reserve(present);
        for (uint32_t id = 0; id < nodes.size(); id++)
            if (nodes[id] != absent) ids.push_back(id);
        if (ids.empty()) return;
        const size_t limit = std::max<size_t>(std::min(codesFrom, trainingSample), 256);
        std::vector<uint32_t> sample;
        if (ids.size() <= limit) {
            sample = ids;
        } else {
            for (size_t i = 0; i < limit; i++) sample.push_back(ids[i * ids.size() / limit]);
        }
        std::vector<uint8_t> vectors(sample.size() * codeBytes);
        for (size_t i = 0; i < sample.size(); i++)
            readNode(&vectors[i * codeBytes], codeBytes, offsetOf(sample[i]) + codeOffset);
        pq.trainFromCodes(vectors.data(), sample.size(), codeBytes, dimensions, codeM, pqIterations, pqSeed);
        codes.reserve(capacity * codeM);
        codes.assignZeros(nodes.size() * codeM);
        std::vector<float> table(pq.tableFloats());
        std::vector<char> vector(codeBytes);
        for (size_t i = 0, next = 0; i < ids.size(); i++) {
            const char *values;
            if (next < sample.size() && sample[next] == ids[i]) {
                values = reinterpret_cast<const char *>(&vectors[next++ * codeBytes]);
            } else {
                readNode(vector.data(), codeBytes, offsetOf(ids[i]) + codeOffset);
                values = vector.data();
            }
            pq.buildTable(values, table.data());
            pq.encode(table.data(), &codes[size_t(ids[i]) * codeM]);
        }
        coded = true;
        syncHeld();
    }

    float codeDistance(uint32_t id, const Scratch &s) const
    {
        return pq.distance(s.table.data(), &codes[size_t(id) * codeM]);
    }

    // Asks the cache for label `id`'s code (both lines it may span).
    void prefetchCode(uint32_t id) const
    {
        const uint8_t *code = &codes[size_t(id) * codeM];
        __builtin_prefetch(code);
        __builtin_prefetch(code + codeM - 1);
    }

    // The greedy descent from `start` through the layers from `top` down to above `above` by codes alone (no
    // read): the node it ends at.
    uint32_t descendByCodes(uint32_t start, int top, int above, Scratch &s) const
    {
        uint32_t current = start;
        float best = codeDistance(current, s);
        s.links.resize(m0 + 1);
        uint32_t *list = s.links.data();
        for (int layer = top; layer > above; layer--) {
            for (bool moved = true; moved;) {
                moved = false;
                const size_t count = upperLinksOf(current, layer, list);
                for (size_t i = 0; i < count; i++) {
                    const uint32_t next = list[i];
                    if (!isPresent(next)) continue;
                    const float d = codeDistance(next, s);
                    if (d < best) {
                        best = d;
                        current = next;
                        moved = true;
                    }
                }
            }
        }
        return current;
    }

    // DiskANN's beam search at level 0 (breadth `ef`) from `start`: candidates are ranked by their codes; the
    // nearest one not yet expanded is read (one pread of its record: list and 8-bit vector), scored exactly
    // and expanded, until the nearest candidate left is farther, by its code, than the ef-th found. Returns
    // the expanded nodes, nearest first by their 8-bit vectors, their records in the scratch's pool (deleted
    // ones included: the caller skips them).
    const std::vector<Scored> &searchByCodes(const char *query, uint32_t start, size_t ef, Scratch &s) const
    {
        s.clearVisited();
        s.visit(start);
        std::vector<Scored> &candidates = s.candidates, &found = s.found, &expanded = s.expanded;
        const Scored first{codeDistance(start, s), start, 0};
        candidates.assign(1, first);
        found.assign(1, first);
        expanded.clear();
        s.used = 0;
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (found.size() >= ef && nearest.distance > found.front().distance) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            const Scored read = score(nearest.id, query, s);
            expanded.push_back(read);
            const size_t listed = linksOf(read, 0, links, s);
            // The neighbours not yet visited, their codes fetched into the cache before any is scored (a code
            // is 48 bytes of a 4.8 MB array at 100,000 labels: scoring them one after another waited on each).
            size_t count = 0;
            for (size_t i = 0; i < listed; i++) {
                const uint32_t next = links[i];
                if (!isPresent(next) || !s.visit(next)) continue;
                links[count++] = next;
                prefetchCode(next);
            }
            for (size_t i = 0; i < count; i++) {
                const uint32_t next = links[i];
                const Scored scored{codeDistance(next, s), next, 0};
                if (found.size() >= ef && scored.distance >= found.front().distance) continue;
                candidates.push_back(scored);
                std::push_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
                keepBest(found, scored, ef);
            }
        }
        std::sort(expanded.begin(), expanded.end());
        return expanded;
    }

    void readRecord(uint32_t id, char *out) const { readNode(out, recordBytes, offsetOf(id)); }

    // Node `id` scored against `query`: its record in a slot of the scratch (pointed to where it is held, else
    // read into the pool; copied under its lock when inserts run side by side, which write lists meanwhile).
    Scored score(uint32_t id, const char *query, Scratch &s) const
    {
        uint32_t slot = s.slot();
        const size_t offset = offsetOf(id);
        if (locks != nullptr) {
            NodeLock hold(locks, id);
            readNode(s.poolRecord(slot), recordBytes, offset);
            s.writesSeen[slot] = locks->writesOf(id);
        } else if (inEarly(recordBytes, offset)) {
            s.held[slot] = early.data() + (offset - headerBytes);
        } else {
            readExactly(fd, s.poolRecord(slot), recordBytes, offset);
        }
        return Scored{distance(query, s.record(slot) + codeOffset), id, slot};
    }

    // The links of `c` at `layer` into `out`; their count.
    size_t linksOf(const Scored &c, int layer, uint32_t *out, Scratch &s) const
    {
        if (layer == 0) {
            uint32_t count;
            std::memcpy(&count, s.record(c.slot), 4);
            count = std::min<uint32_t>(count & ~tombstone, uint32_t(m0));
            std::memcpy(out, s.record(c.slot) + 4, size_t(count) * 4);
            return count;
        }
        return upperLinksOf(c.id, layer, out);
    }

    // The links of node `id` at upper `layer` into `out` (under its lock when inserts run side by side); their
    // count.
    size_t upperLinksOf(uint32_t id, int layer, uint32_t *out) const
    {
        auto found = upper.find(id);
        if (found == upper.end() || size_t(layer) * (1 + m) > found->second.size()) return 0;
        const uint32_t *list = &found->second[size_t(layer - 1) * (1 + m)];
        NodeLock hold(locks, id);
        const size_t count = std::min<size_t>(list[0], m);
        std::memcpy(out, list + 1, count * 4);
        return count;
    }

    bool isTombstoned(const Scored &c, Scratch &s) const
    {
        uint32_t count;
        std::memcpy(&count, s.record(c.slot), 4);
        return (count & tombstone) != 0;
    }

    // The beam search of breadth `ef` at `layer` from `start`, nearest first (valid until the scratch's next
    // search). Every node scored is read whole (its links are used if it is expanded). `skipDeleted`: deleted
    // nodes are passed through but not kept among the found (hnswlib's rule).
    const std::vector<Scored> &searchLayer(
        const char *query, Scored start, size_t ef, int layer, bool skipDeleted, Scratch &s) const
    {
        s.clearVisited();
        s.visit(start.id);
        std::vector<Scored> &candidates = s.candidates, &found = s.found;
        candidates.assign(1, start);
        found.clear();
        if (!skipDeleted || !isTombstoned(start, s)) found.push_back(start);
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (found.size() >= ef && nearest.distance > found.front().distance) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            const size_t count = linksOf(nearest, layer, links, s);
            for (size_t i = 0; i < count; i++) {
                const uint32_t next = links[i];
                if (!isPresent(next) || !s.visit(next)) continue;
                const Scored scored = score(next, query, s);
                if (found.size() >= ef && scored.distance >= found.front().distance) {
                    s.used--;  // the slot is not kept
                    continue;
                }
                candidates.push_back(scored);
                std::push_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
                if (skipDeleted && isTombstoned(scored, s)) continue;
                keepBest(found, scored, ef);
            }
        }
        std::sort_heap(found.begin(), found.end());
        return found;
    }

    // The neighbour-selection heuristic: a candidate (nearest first) is kept only if it is nearer to the base
    // than to every one kept before it; at most `most`.
    template <typename Vector>
    void selectNeighbours(const std::vector<Scored> &candidates, size_t most, std::vector<Scored> &chosen, Vector vector)
        const
    {
        chosen.clear();
        for (const Scored &candidate : candidates) {
            if (chosen.size() >= most) break;
            const char *mine = vector(candidate);
            bool kept = true;
            for (const Scored &other : chosen) {
                if (distance(mine, vector(other)) < candidate.distance) {
                    kept = false;
                    break;
                }
            }
            if (kept) chosen.push_back(candidate);
        }
    }

    void writeLevel0List(uint32_t id, uint32_t count, const uint32_t *ids, bool deleted, Scratch &s)
    {
        std::vector<uint32_t> &list = s.level0List;
        list.assign(1 + m0, 0);
        list[0] = count | (deleted ? tombstone : 0);
        std::memcpy(list.data() + 1, ids, size_t(count) * 4);
        writeNode(list.data(), 4 * (1 + m0), offsetOf(id));
        if (locks != nullptr) locks->wrote(id);  // under its lock (the callers hold it)
    }

    // Node `id`'s 8-bit vector if this insert's search read its record (`s.known`), else null.
    const char *knownVector(uint32_t id, Scratch &s) const
    {
        const uint64_t key = uint64_t(id) << 32;
        auto at = std::lower_bound(s.known.begin(), s.known.end(), key);
        if (at == s.known.end() || (*at >> 32) != id) return nullptr;
        return s.record(uint32_t(*at)) + codeOffset;
    }

    // Links `neighbour` back to `id` (whose code is `code`) at `layer`, their distance `d`; a full list is
    // pruned by the heuristic over its nodes and `id`. `known`: the neighbour's record as this insert read it
    // (into slot `knownSlot`), else it is read. Its vector is current (a vector changes only in an insert that
    // replaces it, and those run one at a time); its list is current when inserts run one at a time, and beside
    // others when no level-0 list was written under the neighbour's lock since it was read (else the list is read
    // again). The lock is held from that check until the new list is written.
    void connect(uint32_t neighbour, uint32_t id, const char *code, int layer, float d, Scratch &s,
        const char *known = nullptr, uint32_t knownSlot = 0)
    {
        const size_t most = layer == 0 ? m0 : m;
        std::vector<char> &records = s.pruneRecords;
        records.resize((most + 2) * recordBytes);
        NodeLock hold(locks, neighbour);
        const char *own = known;  // the neighbour's record (its code)
        if (own == nullptr) {
            char *into = records.data() + (most + 1) * recordBytes;
            readRecord(neighbour, into);
            own = into;
        } else if (locks != nullptr && layer == 0 && locks->writesOf(neighbour) != s.writesSeen[knownSlot]) {
            char *into = records.data() + (most + 1) * recordBytes;
            readNode(into, codeOffset, offsetOf(neighbour));
            std::memcpy(into + codeOffset, known + codeOffset, codeBytes);
            own = into;
        }
        std::vector<uint32_t> &list = s.list;
        bool tombstoned = false;
        if (layer == 0) {
            list.assign(1 + most, 0);
            std::memcpy(list.data(), own, 4 * (1 + m0));
            tombstoned = (list[0] & tombstone) != 0;
            list[0] &= ~tombstone;
        } else {
            const std::vector<uint32_t> &lists = upper.at(neighbour);
            list.assign(lists.begin() + ptrdiff_t(size_t(layer - 1) * (1 + m)), lists.begin() + ptrdiff_t(size_t(layer) * (1 + m)));
        }
        const uint32_t count = std::min<uint32_t>(list[0], uint32_t(most));
        for (uint32_t i = 1; i <= count; i++)
            if (list[i] == id) return;
        if (count < most) {
            list[1 + count] = id;
            list[0] = count + 1;
        } else {
            // The heuristic needs every listed node's 8-bit vector: the records this insert's search read
            // (`s.known`; a vector changes only in an insert that replaces it, which runs alone) are looked up, the others
            // read into slot i of `records`.
            std::vector<Scored> &candidates = s.pruneCandidates;
            candidates.clear();
            for (uint32_t i = 0; i < count; i++) {
                const uint32_t other = list[1 + i];
                const char *vector = knownVector(other, s);
                if (vector == nullptr) {
                    char *record = records.data() + size_t(i) * recordBytes;
                    readNode(record + codeOffset, codeBytes, offsetOf(other) + codeOffset);
                    vector = record + codeOffset;
                }
                candidates.push_back(Scored{distance(own + codeOffset, vector), other, i});
            }
            candidates.push_back(Scored{d, id, count});
            std::sort(candidates.begin(), candidates.end());
            auto vectorOf = [&](const Scored &c) -> const char * {
                if (c.id == id) return code;
                const char *vector = knownVector(c.id, s);
                return vector != nullptr ? vector : records.data() + size_t(c.slot) * recordBytes + codeOffset;
            };
            selectNeighbours(candidates, most, s.pruneChosen, vectorOf);
            for (size_t i = 0; i < s.pruneChosen.size(); i++) list[1 + i] = s.pruneChosen[i].id;
            for (size_t i = s.pruneChosen.size(); i < most; i++) list[1 + i] = 0;
            list[0] = uint32_t(s.pruneChosen.size());
        }
        if (layer == 0) {
            writeLevel0List(neighbour, list[0], list.data() + 1, tombstoned, s);
        } else {
            std::vector<uint32_t> &lists = upper.at(neighbour);
            std::copy(list.begin(), list.end(), lists.begin() + ptrdiff_t(size_t(layer - 1) * (1 + m)));
        }
    }

    // Inserts `id` with the code `code`, or gives a label already present (deleted or not) its new vector and
    // a new neighbourhood. The caller holds the lock alone, and no other insert runs.
    void insert(uint32_t id, const char *code, Scratch &s)
    {
        if (!isPresent(id)) {
            place(id, code, admit(id), s);
            return;
        }
        const int level = levelOf(id);
        if (nodes[id] & deletedFlag) deleted--;
        nodes[id] = uint8_t(level);
        // The new vector and the tombstone cleared; the old lists stay until the new ones are chosen, so the
        // graph stays connected through this node meanwhile.
        uint32_t count;
        readNode(&count, 4, offsetOf(id));
        count &= ~tombstone;
        writeNode(&count, 4, offsetOf(id));
        writeNode(code, codeBytes, offsetOf(id) + codeOffset);
        link(id, code, level, s);
    }

    // Counts label `id` (not present) in: its level, its upper lists (empty). Its record is written by `place`.
    // Done for a whole batch before its inserts run side by side: they change neither `nodes` nor `upper`'s
    // keys, so they read both without a lock. Returns its level.
    int admit(uint32_t id)
    {
        const int level = randomLevel(id);
        nodes[id] = uint8_t(level);
        present++;
        if (level > 0) upper[id].assign(size_t(level) * (1 + m), 0);
        return level;
    }

    // Inserts admitted label `id` at `level` with the code `code`: its record (no links yet), then its links.
    // Other inserts may run beside it (`locks`): none reaches `id` before a list names it, which `link` writes
    // after the record.
    void place(uint32_t id, const char *code, int level, Scratch &s)
    {
        std::vector<char> &record = s.pruneRecords;
        record.assign(recordBytes, 0);
        std::memcpy(record.data() + codeOffset, code, codeBytes);
        writeNode(record.data(), recordBytes, offsetOf(id));
        link(id, code, level, s);
    }

    // Gives node `id` (code `code`, its record written) its neighbourhood at each layer up to `level`, and links
    // the neighbours back: HNSW's insert. An insert that raises the graph's top level (or starts the graph)
    // holds `entryLock` throughout, as hnswlib's does; the others read the entry point under it and let it go.
    void link(uint32_t id, const char *code, int level, Scratch &s)
    {
        if (coded) {
            // Its code first, from its table (which the insert's searches use).
            s.table.resize(pq.tableFloats());
            pq.buildTable(code, s.table.data());
            pq.encode(s.table.data(), &codes[size_t(id) * codeM]);
        }
        std::unique_lock<std::mutex> entryHeld(entryLock);
        const int64_t start = entry;
        const int top = topLevel;
        if (level <= top) entryHeld.unlock();
        if (start < 0) {
            entry = id;
            topLevel = level;
            return;
        }
        s.clearVisited();
        s.used = 0;
        // Every layer is searched first, top down, then linked bottom up (level 0 first): another insert reaches
        // this node at a layer only once linked there, and finds its lists at that layer and below written (linked
        // top down, a node reached through an upper layer had no level-0 list yet, and an insert that started
        // there linked to it alone; session 37). The searches do not depend on the links (a layer's links change
        // only that layer's lists), so one thread builds the same graph either way. It also means no other insert
        // links into this node's list at a layer before the node writes it there (once, before linking back), so
        // the write need not keep links gained meanwhile (session 38 removed that merge, a read an insert).
        const int highest = std::min(level, top);
        std::vector<std::vector<Scored>> upperFound(size_t(std::max(highest, 0)) + 1);
        if (coded) {
            uint32_t current = descendByCodes(uint32_t(start), top, level, s);
            // The upper layers by codes alone (no read): the harness's way.
            for (int layer = highest; layer >= 1; layer--) {
                upperFound[size_t(layer)] = searchUpperByCodes(current, efConstruction, layer, s);
                current = upperFound[size_t(layer)][0].id;
            }
            linkLayer(id, code, 0, searchByCodes(code, current, efConstruction, s), s, true);
            for (int layer = 1; layer <= highest; layer++) linkUpperByCodes(id, layer, upperFound[size_t(layer)], s);
        } else {
            Scored current = score(uint32_t(start), code, s);
            for (int layer = top; layer > level; layer--)
                current = searchLayer(code, current, 1, layer, false, s)[0];
            for (int layer = highest; layer >= 1; layer--) {
                upperFound[size_t(layer)] = searchLayer(code, current, efConstruction, layer, false, s);
                current = upperFound[size_t(layer)][0];
            }
            linkLayer(id, code, 0, searchLayer(code, current, efConstruction, 0, false, s), s, false);
            for (int layer = 1; layer <= highest; layer++)
                linkLayer(id, code, layer, upperFound[size_t(layer)], s, false);
        }
        if (level > top) {
            entry = id;
            topLevel = level;
        }
    }

    // Gives `id` its neighbours at `layer` among `found` (nearest first, their records in the scratch's pool)
    // by the heuristic, and links them back to it. `recordsKnown`: the chosen nodes' records in the pool are
    // current (read by this insert's search at this layer), so linking back need not read them again.
    void linkLayer(uint32_t id, const char *code, int layer, const std::vector<Scored> &found, Scratch &s, bool recordsKnown)
    {
        std::vector<Scored> others;
        others.reserve(found.size());
        for (const Scored &c : found)
            if (c.id != id) others.push_back(c);
        selectNeighbours(others, m, s.chosen, [&](const Scored &c) { return s.record(c.slot) + codeOffset; });
        std::vector<uint32_t> ids;
        for (const Scored &c : s.chosen) ids.push_back(c.id);
        {
            NodeLock hold(locks, id);  // let go before the neighbours' locks are taken (one lock at a time)
            if (layer == 0) {
                writeLevel0List(id, uint32_t(ids.size()), ids.data(), false, s);
            } else {
                uint32_t *list = &upper.at(id)[size_t(layer - 1) * (1 + m)];
                std::fill(list, list + 1 + m, 0);
                list[0] = uint32_t(ids.size());
                std::copy(ids.begin(), ids.end(), list + 1);
            }
        }
        s.known.clear();
        for (const Scored &c : found) s.known.push_back(uint64_t(c.id) << 32 | c.slot);
        std::sort(s.known.begin(), s.known.end());
        const std::vector<Scored> chosen = s.chosen;
        for (const Scored &neighbour : chosen)
            connect(neighbour.id, id, code, layer, neighbour.distance, s,
                recordsKnown && layer == 0 ? s.record(neighbour.slot) : nullptr, neighbour.slot);
    }

    // The slot in the scratch's `decoded` of node `id`'s decoded code, decoded there at its first use since
    // `decodedIds` was cleared.
    size_t decodedSlot(uint32_t id, Scratch &s) const
    {
        const uint64_t key = uint64_t(id) << 32;
        auto at = std::lower_bound(s.decodedIds.begin(), s.decodedIds.end(), key);
        if (at != s.decodedIds.end() && (*at >> 32) == id) return size_t(uint32_t(*at));
        const size_t slot = s.decodedIds.size();
        s.decodedIds.insert(at, key | slot);
        decodeInto(id, slot, s);
        return slot;
    }

    // Node `id`'s code decoded into 8-bit vector number `slot` of the scratch's `decoded` (valid until it grows).
    const char *decodeInto(uint32_t id, size_t slot, Scratch &s) const
    {
        if (s.decoded.size() < (slot + 1) * codeBytes) s.decoded.resize(std::max((slot + 1) * codeBytes, 2 * s.decoded.size()));
        char *out = s.decoded.data() + slot * codeBytes;
        pq.decode(&codes[size_t(id) * codeM], reinterpret_cast<uint8_t *>(out), s.decodeFloats);
        return out;
    }

    // The beam search of breadth `ef` at upper `layer` from `start` by codes alone (no read), nearest first by
    // code distance (valid until the scratch's next search).
    const std::vector<Scored> &searchUpperByCodes(uint32_t start, size_t ef, int layer, Scratch &s) const
    {
        s.clearVisited();
        s.visit(start);
        std::vector<Scored> &candidates = s.candidates, &found = s.found;
        const Scored first{codeDistance(start, s), start, 0};
        candidates.assign(1, first);
        found.assign(1, first);
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (found.size() >= ef && nearest.distance > found.front().distance) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            const size_t count = linksOf(nearest, layer, links, s);
            for (size_t i = 0; i < count; i++) {
                const uint32_t next = links[i];
                if (!isPresent(next) || !s.visit(next)) continue;
                const Scored scored{codeDistance(next, s), next, 0};
                if (found.size() >= ef && scored.distance >= found.front().distance) continue;
                candidates.push_back(scored);
                std::push_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
                keepBest(found, scored, ef);
            }
        }
        std::sort_heap(found.begin(), found.end());
        return found;
    }

    // Gives `id` its neighbours at upper `layer` among `found` by the heuristic over their
    // decoded codes, and links them back to it, a full list pruned by decoded codes too: no read.
    void linkUpperByCodes(uint32_t id, int layer, const std::vector<Scored> &found, Scratch &s)
    {
        // Each code is decoded once a call, when first needed (`decodedSlot`): the heuristic asks only for the
        // candidates it reaches, and a full neighbour's list mostly names nodes decoded already. `decoded` gets
        // room for every code this call may decode first (the found, and each chosen neighbour's list with
        // itself and `id`), so it never moves: the heuristic holds a candidate's pointer while it decodes the
        // others (session 35: it grew under that pointer, and the graph built differed run to run).
        s.decodedIds.clear();
        const size_t most = found.size() + m * (m + 2) + 1;
        if (s.decoded.size() < most * codeBytes) s.decoded.resize(most * codeBytes);
        auto vectorOf = [&](const Scored &c) {
            return static_cast<const char *>(s.decoded.data() + decodedSlot(c.id, s) * codeBytes);
        };
        std::vector<Scored> others;
        others.reserve(found.size());
        for (const Scored &c : found)
            if (c.id != id) others.push_back(c);
        selectNeighbours(others, m, s.chosen, vectorOf);
        const std::vector<Scored> chosen = s.chosen;
        {
            NodeLock hold(locks, id);  // let go before a neighbour's is taken (one lock at a time)
            uint32_t *list = &upper.at(id)[size_t(layer - 1) * (1 + m)];
            std::vector<uint32_t> ids;
            for (const Scored &c : chosen) ids.push_back(c.id);
            std::fill(list, list + 1 + m, 0);
            list[0] = uint32_t(ids.size());
            std::copy(ids.begin(), ids.end(), list + 1);
        }
        for (const Scored &neighbour : chosen) {
            NodeLock hold(locks, neighbour.id);  // its list read, pruned and written as one step
            std::vector<uint32_t> &lists = upper.at(neighbour.id);
            uint32_t *theirs = &lists[size_t(layer - 1) * (1 + m)];
            const uint32_t count = std::min<uint32_t>(theirs[0], uint32_t(m));
            bool already = false;
            for (uint32_t i = 1; i <= count; i++) already = already || theirs[i] == id;
            if (already) continue;
            if (count < m) {
                theirs[1 + count] = id;
                theirs[0] = count + 1;
                continue;
            }
            // Full: the heuristic over its nodes and `id` (its own code decoded like the others), all by decoded
            // codes. Pointers into `decoded` are taken after the decodes (it may grow).
            const size_t own = decodedSlot(neighbour.id, s);
            std::vector<Scored> &candidates = s.pruneCandidates;
            candidates.clear();
            for (uint32_t i = 0; i <= count; i++) {
                const uint32_t other = i < count ? theirs[1 + i] : id;
                const size_t slot = decodedSlot(other, s);
                const char *vectors = s.decoded.data();
                candidates.push_back(Scored{distance(vectors + own * codeBytes, vectors + slot * codeBytes), other, 0});
            }
            std::sort(candidates.begin(), candidates.end());
            selectNeighbours(candidates, m, s.pruneChosen, vectorOf);
            for (size_t i = 0; i < m; i++) theirs[1 + i] = i < s.pruneChosen.size() ? s.pruneChosen[i].id : 0;
            theirs[0] = uint32_t(s.pruneChosen.size());
        }
    }

    // Writes the upper section at `offset` of the file, part by part — the level bytes, the upper lists (gathered
    // a megabyte at a time), then, once trained, the float centroids (the rest is derived from them at load) and
    // every slot's code straight from the graph's arrays — and returns its length and checksum. Session 40: it was
    // gathered whole first, a copy of the codes (14 MB at 148,000 slots with 96-byte codes) beside them at a load's
    // last save, when the process's memory peaks.
    std::pair<uint64_t, uint64_t> writeUpperSection(size_t offset) const
    {
        SectionWriter out{fd, offset};
        out.append(nodes.data(), nodes.size());
        for (uint32_t id = 0; id < nodes.size(); id++) {
            if (nodes[id] == absent || levelOf(id) == 0) continue;
            const std::vector<uint32_t> &lists = upper.at(id);
            out.append(lists.data(), lists.size() * 4);
        }
        if (coded) {
            out.append(pq.centroids.data(), pq.centroids.size() * 4);
            out.append(codes.data(), slots() * codeM);
        }
        out.flush();
        return {out.written, out.checksum};
    }

    // Bytes written in order from `offset`, small pieces gathered into a buffer, and their running checksum (the
    // checksum of the concatenation: FNV-1a reads byte by byte).
    struct SectionWriter {
        static constexpr size_t bufferBytes = 1 << 20;
        int fd;
        size_t offset;
        uint64_t written = 0;
        uint64_t checksum = fnv1a(nullptr, 0);
        std::vector<uint8_t> buffer;

        void append(const void *bytes, size_t count)
        {
            if (count == 0) return;
            checksum = fnv1a(bytes, count, checksum);
            if (buffer.size() + count > bufferBytes) flush();
            if (count >= bufferBytes) {
                writeExactly(fd, bytes, count, offset + written);
                written += count;
                return;
            }
            const uint8_t *from = static_cast<const uint8_t *>(bytes);
            buffer.insert(buffer.end(), from, from + count);
        }

        void flush()
        {
            if (buffer.empty()) return;
            writeExactly(fd, buffer.data(), buffer.size(), offset + written);
            written += buffer.size();
            buffer.clear();
        }
    };

    Header header(uint64_t upperBytes, uint64_t upperChecksum) const
    {
        Header h;
        std::memset(&h, 0, sizeof h);
        std::memcpy(h.magic, magic, sizeof magic);
        h.version = formatVersion;
        h.quantizer = quantizerVersion;
        h.dimensions = uint32_t(dimensions);
        h.m = uint32_t(m);
        h.recordBytes = uint32_t(recordBytes);
        h.codeBytes = uint32_t(codeM);
        h.codesFrom = codesFrom;
        h.codebookFloats = coded ? pq.centroids.size() : 0;
        h.slots = slots();
        h.capacity = capacity;
        h.present = present;
        h.deleted = deleted;
        h.entry = entry;
        h.topLevel = topLevel;
        h.upperOffset = offsetOf(uint32_t(slots()));
        h.upperBytes = upperBytes;
        h.upperChecksum = upperChecksum;
        h.checksum = fnv1a(&h, offsetof(Header, checksum));
        return h;
    }
};

namespace {

std::string folderOf(const std::string &path)
{
    size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

}  // namespace

SluiceFileGraph *sluice_fgraph_create(
    const char *directory, size_t dimensions, size_t capacity, size_t m, size_t ef_construction, size_t code_bytes,
    size_t codes_from, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceFileGraph *>(nullptr), [&]() {
        if (m < 2 || dimensions == 0) throw std::runtime_error("a graph needs M ≥ 2 and a dimension");
        auto graph = std::make_unique<SluiceFileGraph>(directory, dimensions, m, ef_construction);
        graph->codeM = SluiceFileGraph::fittingCodeBytes(dimensions, code_bytes);
        graph->codesFrom = std::max<size_t>(codes_from, 1);
        graph->capacity = std::max<size_t>(capacity, 16);
        graph->nodes.reserve(graph->capacity);
        graph->ensureWorking();
        return graph.release();
    });
}

SluiceFileGraph *sluice_fgraph_load(
    const char *path, size_t dimensions, size_t ef_construction, char *error, size_t error_size)
{
    return guarded(error, error_size, static_cast<SluiceFileGraph *>(nullptr), [&]() -> SluiceFileGraph * {
        // No access times: every `pread` otherwise asks whether to update one (O_NOATIME is refused, EPERM, on
        // a file of another owner: then opened without it).
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
        if (fd < 0 && errno == EPERM) fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw systemError(std::string("cannot open ") + path);
        struct stat info;
        if (fstat(fd, &info) != 0) {
            close(fd);
            throw systemError("cannot read the node file's size");
        }
        const size_t size = size_t(info.st_size);
        Header h;
        if (size < headerBytes) {
            close(fd);
            throw std::runtime_error("the node file is cut short (no whole header)");
        }
        try {
            readExactly(fd, &h, sizeof h, 0);
        } catch (...) {
            close(fd);
            throw;
        }
        auto refuse = [&](const char *why) {
            close(fd);
            throw std::runtime_error(why);
        };
        if (std::memcmp(h.magic, magic, sizeof magic) != 0) refuse("not a node file (no magic number)");
        uint32_t version;
        std::memcpy(&version, reinterpret_cast<const char *>(&h) + versionOffset, 4);
        if (version != formatVersion) {
            const std::string why = "the node file has format version " + std::to_string(version) +
                                    ", this build reads version " + std::to_string(formatVersion) +
                                    " (with product-quantized codes): the graph is built again";
            close(fd);
            throw std::runtime_error(why);
        }
        if (h.checksum != fnv1a(&h, offsetof(Header, checksum))) refuse("the node file's header is damaged");
        if (h.quantizer != quantizerVersion) refuse("the node file was written by another quantizer");
        if (h.dimensions != dimensions) refuse("the node file was made for another dimension");
        if (h.m < 2 || h.recordBytes != 4 + 8 * size_t(h.m) + scaleBytes + dimensions)
            refuse("the node file's record size does not match its dimension and M");
        auto graph = std::make_unique<SluiceFileGraph>(folderOf(path), dimensions, h.m, ef_construction);
        graph->fd = fd;
        if (h.upperOffset != graph->offsetOf(uint32_t(h.slots)) || h.upperBytes < h.slots ||
            h.slots >= uint64_t(UINT32_MAX))
            throw std::runtime_error("the node file's header is inconsistent");
        if (size < h.upperOffset + h.upperBytes) throw std::runtime_error("the node file is cut short");
        // The upper section's checksum first, read a megabyte at a time; then each part read straight where it
        // goes. Session 40: the section was read whole, a copy of the codes beside them while they were loaded
        // (96 MB more at a million labels with 96-byte codes).
        {
            std::vector<uint8_t> chunk(size_t(std::min<uint64_t>(h.upperBytes, uint64_t(1) << 20)));
            uint64_t checksum = fnv1a(nullptr, 0);
            for (uint64_t done = 0; done < h.upperBytes;) {
                const size_t count = size_t(std::min<uint64_t>(chunk.size(), h.upperBytes - done));
                readExactly(fd, chunk.data(), count, size_t(h.upperOffset + done));
                checksum = fnv1a(chunk.data(), count, checksum);
                done += count;
            }
            if (checksum != h.upperChecksum) throw std::runtime_error("the node file's upper section is damaged");
        }
        graph->capacity = std::max<size_t>(h.capacity, h.slots);
        graph->nodes.reserve(graph->capacity);
        graph->nodes.resize(size_t(h.slots));
        readExactly(fd, graph->nodes.data(), size_t(h.slots), size_t(h.upperOffset));
        const size_t listBytes = 4 * (1 + graph->m);
        size_t listsTotal = 0;
        for (uint32_t id = 0; id < h.slots; id++) {
            const uint8_t node = graph->nodes[id];
            if (node != absent) listsTotal += size_t(node & levelMask) * listBytes;
        }
        const size_t sectionBytes = size_t(h.upperBytes);
        if (h.slots + listsTotal > sectionBytes) throw std::runtime_error("the node file's upper section is cut short");
        std::vector<uint8_t> listBuffer(listsTotal);
        readExactly(fd, listBuffer.data(), listsTotal, size_t(h.upperOffset + h.slots));
        size_t at = 0;
        for (uint32_t id = 0; id < h.slots; id++) {
            const uint8_t node = graph->nodes[id];
            if (node == absent) continue;
            graph->present++;
            if (node & deletedFlag) graph->deleted++;
            const int level = node & levelMask;
            if (level == 0) continue;
            std::vector<uint32_t> &lists = graph->upper[id];
            lists.resize(size_t(level) * (1 + graph->m));
            std::memcpy(lists.data(), listBuffer.data() + at, size_t(level) * listBytes);
            at += size_t(level) * listBytes;
        }
        at += size_t(h.slots);  // from here, offsets within the section
        if (graph->present != h.present || graph->deleted != h.deleted)
            throw std::runtime_error("the node file's counts do not match its levels");
        graph->codeM = h.codeBytes;
        graph->codesFrom = std::max<uint64_t>(h.codesFrom, 1);
        if (graph->codeM != SluiceFileGraph::fittingCodeBytes(dimensions, graph->codeM))
            throw std::runtime_error("the node file's code size does not fit its dimension");
        if (h.codebookFloats > 0) {
            const size_t floats = ProductQuantizer::centroidCount * dimensions;
            if (graph->codeM == 0 || h.codebookFloats != floats)
                throw std::runtime_error("the node file's codebooks do not match its dimension");
            if (at + floats * 4 + size_t(h.slots) * graph->codeM != sectionBytes)
                throw std::runtime_error("the node file's upper section does not hold its codes");
            ProductQuantizer &pq = graph->pq;
            pq.dimensions = dimensions;
            pq.m = graph->codeM;
            pq.sub = dimensions / graph->codeM;
            pq.centroids.resize(floats);
            readExactly(fd, pq.centroids.data(), floats * 4, size_t(h.upperOffset) + at);
            at += floats * 4;
            pq.derive();
            graph->codes.reserve(graph->capacity * graph->codeM);
            graph->codes.resize(size_t(h.slots) * graph->codeM);
            readExactly(fd, graph->codes.data(), graph->codes.size(), size_t(h.upperOffset) + at);
            graph->coded = true;
        } else if (at != sectionBytes) {
            throw std::runtime_error("the node file's upper section is longer than its lists");
        }
        graph->entry = h.entry;
        graph->topLevel = int(h.topLevel);
        if (graph->entry >= 0 && !graph->isPresent(uint32_t(graph->entry)))
            throw std::runtime_error("the node file's entry point is not a node");
        posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
        graph->syncHeld();
        return graph.release();
    });
}

void sluice_fgraph_free(SluiceFileGraph *graph) { delete graph; }

int sluice_fgraph_save(SluiceFileGraph *graph, const char *path, char *error, size_t error_size)
{
    return guarded(error, error_size, 0, [&]() {
        std::unique_lock<std::shared_mutex> guard(graph->lock);
        if (graph->working) {
            graph->flushHeld();
            const size_t offset = graph->offsetOf(uint32_t(graph->slots()));
            const auto [sectionBytes, sectionChecksum] = graph->writeUpperSection(offset);
            if (ftruncate(graph->fd, off_t(offset + sectionBytes)) != 0)
                throw systemError("cannot cut the node file to its size");
            Header h = graph->header(sectionBytes, sectionChecksum);
            std::vector<char> page(headerBytes, 0);
            std::memcpy(page.data(), &h, sizeof h);
            writeExactly(graph->fd, page.data(), page.size(), 0);
            if (fdatasync(graph->fd) != 0) throw systemError("cannot sync the node file");
        }
        if (unlink(path) != 0 && errno != ENOENT) throw systemError(std::string("cannot replace ") + path);
        const std::string self = "/proc/self/fd/" + std::to_string(graph->fd);
        if (linkat(AT_FDCWD, self.c_str(), AT_FDCWD, path, AT_SYMLINK_FOLLOW) != 0)
            throw systemError(std::string("cannot name the node file ") + path);
        graph->working = false;  // the file now has a name: the next write makes a new working copy
        return 1;
    });
}

int sluice_fgraph_add(
    SluiceFileGraph *graph, const float *vectors, const uint64_t *labels, size_t count, size_t threads, char *error,
    size_t error_size)
{
    return guarded(error, error_size, 0, [&]() {
        std::unique_lock<std::shared_mutex> guard(graph->lock);
        if (count == 0) return 1;
        uint64_t highest = 0;
        for (size_t i = 0; i < count; i++) {
            if (labels[i] >= uint64_t(UINT32_MAX)) throw std::runtime_error("a label past the node file's 32 bits");
            highest = std::max(highest, labels[i]);
        }
        graph->ensureWorking();
        graph->grow(size_t(highest) + 1);
        // New labels (each first time in the batch) are inserted side by side, in runs that end where the codes
        // are trained; the rest — replacements, and a label's later vectors in the batch — after them, one at a
        // time, in the batch's order (the last vector of a label wins, as before).
        std::vector<size_t> fresh, later;
        {
            std::vector<bool> seen(graph->slots(), false);
            for (size_t i = 0; i < count; i++) {
                const uint32_t id = uint32_t(labels[i]);
                (graph->isPresent(id) || seen[id] ? later : fresh).push_back(i);
                seen[id] = true;
            }
        }
        auto quantized = [&](size_t i, std::vector<uint8_t> &code) {
            sluice_chnsw::quantize(vectors + i * graph->dimensions, graph->dimensions, code.data());
            return reinterpret_cast<const char *>(code.data());
        };
        for (size_t done = 0; done < fresh.size();) {
            if (graph->codeM > 0 && !graph->coded && graph->present >= graph->codesAt()) graph->trainCodes();
            size_t run = fresh.size() - done;
            if (graph->codeM > 0 && !graph->coded && graph->present < graph->codesAt())
                run = std::min(run, graph->codesAt() - graph->present);
            std::vector<int> levels(run);
            for (size_t j = 0; j < run; j++) levels[j] = graph->admit(uint32_t(labels[fresh[done + j]]));
            // One thread a 64 inserts at most, as the graph in memory (HNSWIndex.cpp).
            const size_t workers = std::max<size_t>(1, std::min(threads, run / 64 + 1));
            std::unique_ptr<NodeLocks> locks;
            if (workers > 1) locks = std::make_unique<NodeLocks>();
            graph->locks = locks.get();
            std::atomic<size_t> next{0};
            std::atomic<bool> failed{false};
            std::string message;
            std::mutex messageLock;
            auto work = [&]() {
                Scratch scratch(graph->slots(), graph->recordBytes);
                std::vector<uint8_t> code(graph->codeBytes);
                for (size_t j = next++; j < run && !failed; j = next++) {
                    try {
                        const size_t i = fresh[done + j];
                        graph->place(uint32_t(labels[i]), quantized(i, code), levels[j], scratch);
                    } catch (const std::exception &exception) {
                        std::lock_guard<std::mutex> hold(messageLock);
                        if (!failed) message = exception.what();
                        failed = true;
                    }
                }
            };
            std::vector<std::thread> pool;
            for (size_t t = 1; t < workers; t++) pool.emplace_back(work);
            work();
            for (std::thread &thread : pool) thread.join();
            graph->locks = nullptr;
            if (failed) throw std::runtime_error(message);
            done += run;
        }
        if (later.empty()) return 1;
        if (graph->codeM > 0 && !graph->coded && graph->present >= graph->codesAt()) graph->trainCodes();
        Scratch scratch(graph->slots(), graph->recordBytes);
        std::vector<uint8_t> code(graph->codeBytes);
        for (size_t i : later) graph->insert(uint32_t(labels[i]), quantized(i, code), scratch);
        return 1;
    });
}

int sluice_fgraph_mark_deleted(SluiceFileGraph *graph, uint64_t label, char *error, size_t error_size)
{
    return guarded(error, error_size, -1, [&]() {
        std::unique_lock<std::shared_mutex> guard(graph->lock);
        if (label >= graph->slots() || !graph->isPresent(uint32_t(label))) return 0;
        const uint32_t id = uint32_t(label);
        if (graph->nodes[id] & deletedFlag) return 0;
        graph->ensureWorking();
        uint32_t word;
        graph->readNode(&word, 4, graph->offsetOf(id));
        word |= tombstone;
        graph->writeNode(&word, 4, graph->offsetOf(id));
        graph->nodes[id] |= deletedFlag;
        graph->deleted++;
        return 1;
    });
}

size_t sluice_fgraph_search(
    SluiceFileGraph *graph, const float *query, size_t k, size_t ef, uint64_t *labels, float *similarities)
{
    try {
        std::vector<uint8_t> code(graph->codeBytes);
        sluice_chnsw::quantize(query, graph->dimensions, code.data());
        const char *q = reinterpret_cast<const char *>(code.data());
        std::shared_lock<std::shared_mutex> guard(graph->lock);
        if (graph->entry < 0 || k == 0) return 0;
        std::unique_ptr<Scratch> kept = graph->takeScratch();
        Scratch &s = *kept;
        struct GiveBack {
            SluiceFileGraph *graph;
            std::unique_ptr<Scratch> &kept;
            ~GiveBack() { graph->giveBack(std::move(kept)); }
        } giveBack{graph, kept};
        if (graph->coded) {
            s.table.resize(graph->pq.tableFloats());
            graph->pq.buildTable(q, s.table.data());
            const uint32_t start = graph->descendByCodes(uint32_t(graph->entry), graph->topLevel, 0, s);
            size_t n = 0;
            for (const Scored &c : graph->searchByCodes(q, start, std::max(ef, k), s)) {
                if (graph->isTombstoned(c, s)) continue;
                labels[n] = c.id;
                similarities[n] = 1.0f - c.distance;
                if (++n == k) break;
            }
            return n;
        }
        Scored current = graph->score(uint32_t(graph->entry), q, s);
        for (int layer = graph->topLevel; layer > 0; layer--)
            current = graph->searchLayer(q, current, 1, layer, false, s)[0];
        const std::vector<Scored> &found = graph->searchLayer(q, current, std::max(ef, k), 0, true, s);
        const size_t n = std::min(k, found.size());
        for (size_t i = 0; i < n; i++) {
            labels[i] = found[i].id;
            similarities[i] = 1.0f - found[i].distance;
        }
        return n;
    } catch (...) {
        return 0;
    }
}

size_t sluice_fgraph_element_count(SluiceFileGraph *graph)
{
    std::shared_lock<std::shared_mutex> guard(graph->lock);
    return graph->present;
}

size_t sluice_fgraph_deleted_count(SluiceFileGraph *graph)
{
    std::shared_lock<std::shared_mutex> guard(graph->lock);
    return graph->deleted;
}

size_t sluice_fgraph_capacity(SluiceFileGraph *graph)
{
    std::shared_lock<std::shared_mutex> guard(graph->lock);
    return graph->capacity;
}

size_t sluice_fgraph_memory_bytes(SluiceFileGraph *graph)
{
    std::shared_lock<std::shared_mutex> guard(graph->lock);
    // The level bytes, the upper lists (with malloc's rounding) and the map's nodes and buckets.
    size_t bytes = sizeof(SluiceFileGraph) + graph->capacity;
    for (const auto &entry : graph->upper) {
        bytes += (entry.second.size() * sizeof(uint32_t) + 8 + 15) / 16 * 16;
    }
    bytes += graph->upper.size() * 48 + graph->upper.bucket_count() * sizeof(void *);
    // The codes (reserved for the capacity) and the codebooks.
    if (graph->coded) bytes += graph->codes.capacity() + graph->pq.fixedBytes();
    bytes += graph->early.size();  // the records held (the resident budget, or until the codes are trained)
    return bytes + graph->spareBytes();
}

size_t sluice_fgraph_code_bytes(SluiceFileGraph *graph)
{
    std::shared_lock<std::shared_mutex> guard(graph->lock);
    return graph->coded ? graph->codeM : 0;
}

long sluice_fgraph_saved_code_bytes(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    Header h;
    const ssize_t got = pread(fd, &h, sizeof h, 0);
    close(fd);
    if (got != ssize_t(sizeof h) || std::memcmp(h.magic, magic, sizeof magic) != 0 || h.version != formatVersion)
        return -1;
    return h.codebookFloats > 0 ? long(h.codeBytes) : 0;
}

void sluice_fgraph_set_resident_bytes(SluiceFileGraph *graph, size_t bytes)
{
    std::unique_lock<std::shared_mutex> guard(graph->lock);
    graph->residentBytes = bytes;
    char error[256];
    // A read that fails leaves the records unheld (syncHeld): they are read from the file, whose error a
    // search or insert then reports.
    guarded(error, sizeof error, 0, [&]() {
        graph->syncHeld();
        return 1;
    });
}
