// A graph of our own whose bottom-layer nodes live in a file and are read with pread (issue 33 goal 2: the
// disk graph). HNSW's published algorithm (Malkov and Yashunin): each element gets a random level; a search
// descends greedily through the upper layers, which are kept in memory, then runs a beam search of breadth
// ef at level 0; an insert searches each of its layers with ef_construction, chooses M neighbours with the
// neighbour-selection heuristic, links itself to them, and each neighbour whose list is full re-chooses its
// list with the same heuristic. M 16 (M0 32 at level 0), ef_construction 100, as the store's graph.
//
// What the process keeps in memory: a level a node (1 byte), the upper-layer link lists of the ~6% of nodes
// that have a level above 0, 4,096 striped locks, a visited bitset a searching thread, and optionally (the
// node cache) the whole records of the nodes at or above a level chosen so they fit a budget (the nodes
// every search passes through). Everything else is one file of fixed-size records, one a node, in id order:
//   u32 count, u32 links[M0]       the level-0 list (132 bytes at M 16)
//   f32 scale, i8 values[d]        the 8-bit vector, as the store's quantizer writes it (388 bytes at 384 d)
// (520 bytes a node at 384 d; the node's id is its label, as the store's labels are dense). A search reads
// each node it scores with one pread of its record (links and vector together), keeps the records it
// accepts into its beam so that expanding one needs no second read, and reads upper-layer nodes' vectors
// alone (pread of the vector part). An insert does the same (under the striped locks when another thread
// inserts at once; with one insert thread it takes no lock), writes its own record with pwrite before any
// other node links to it, then rewrites each neighbour's link list with pwrite under the neighbour's stripe
// (reading the vectors of the neighbour's neighbours to prune a full list).
//
// The vectors and queries are those of `sluice-bench local-search` and Benchmarks/ann/hnsw_mapped.cpp (the
// `ClusteredVectors` generator, the same seed), the kernels and quantizer the store's (Sources/CHNSW, included),
// recall@10 against an exact float scan after re-ranking the best k + max(k, 8) by the float vectors read
// with pread, as the store does.
//
//   clang++ -std=c++17 -O2 -ffp-contract=off -pthread -I Sources/CHNSW/include \
//       -o /tmp/hnsw_pread Benchmarks/ann/hnsw_pread.cpp
//   /tmp/hnsw_pread --vectors 100000 --dir DIR [--build file|memory] [--cache-mb 4] [--threads 2]
//       [--queries 200] [--ef auto|N[,N...]] [--m 16] [--ef-construction 100] [--cold] [--batch uring]
//       [--pq M [--pq-sample 20000] [--pq-iterations 10] [--pq-prune read|pq] [--pq-build pq|exact]] [--npy FILE]
// --build file (the default) inserts through pread/pwrite on DIR/nodes.bin; --build memory inserts with the
// same code into an anonymous buffer of the same records (nodes scored in place, an expanded node's links
// copied out, lists rewritten in place), then writes the file and frees the buffer: the searches read the
// file with pread either way. --cache-mb 0 holds no records.
// With a cache, each search pass runs with it and again bypassing it (reading those nodes from the file).
// --cold adds passes that drop the node file's pages from the page cache (posix_fadvise DONTNEED) before
// every search, so that every pread goes to the disk: a store whose file the kernel has evicted.
// --batch uring (built with -DHNSW_PREAD_URING and -luring: Debian's liburing-dev) reads the unvisited
// neighbours of each expanded level-0 node with one io_uring submission, during the build and the searches
// (each search pass then runs again without it).
// --pq M (session 32; Sources/CHNSW/ProductQuantizer.h, the store's own): DiskANN's navigation — a product-quantized code of every node in memory (M
// bytes; codebooks by k-means on the first --pq-sample vectors, --pq-iterations rounds) scores the
// candidates, and only the nodes a search or an insert expands are read (their records), their 8-bit vectors
// ordering the result and feeding the insert's heuristic; --pq-prune read|pq prunes a full level-0 list with
// its nodes' vectors read or their codes decoded; --pq-build exact inserts as without --pq (codes written for
// the searches). --npy FILE reads real vectors (float32 n x 384): its last --queries rows are the queries.
#include "../../Sources/CHNSW/HNSWIndex.cpp"
#include "ann_bench.h"
#include "../../Sources/CHNSW/ProductQuantizer.h"

#include <sys/mman.h>
#include <sys/stat.h>

#include <chrono>
#include <climits>
#include <functional>
#include <unordered_map>

#if defined(HNSW_PREAD_URING)
#include <liburing.h>
#endif

using sluice_chnsw::tableDotsAVX2;
using sluice_chnsw::tableDotsPortable;
using sluice_chnsw::ProductQuantizer;

namespace bench {

// What one thread read: records and vectors with pread (or memcpy from the build's buffer), from the cache.
struct Counters {
    size_t level0Reads = 0, upperReads = 0, pruneReads = 0, cached = 0, writes = 0;
    size_t submissions = 0;  // io_uring_enter calls of the batched level-0 reads (--batch uring)
    size_t distances = 0;    // distance kernel calls
    // With --pq: lists read again to link back to a chosen neighbour (0 with one insert thread: the record
    // read when it was expanded is current), code distances (table look-ups), tables built, vectors decoded.
    size_t linkReads = 0, codeDistances = 0, tables = 0, decoded = 0;

    size_t fileReads() const { return level0Reads + upperReads + pruneReads + linkReads; }
    void add(const Counters &other)
    {
        level0Reads += other.level0Reads;
        upperReads += other.upperReads;
        pruneReads += other.pruneReads;
        cached += other.cached;
        writes += other.writes;
        submissions += other.submissions;
        distances += other.distances;
        linkReads += other.linkReads;
        codeDistances += other.codeDistances;
        tables += other.tables;
        decoded += other.decoded;
    }
};

// A scored node: its distance to the query, its id, and where its record is in the search's pool.
struct Scored {
    float distance;
    uint32_t id;
    uint32_t slot;
    bool operator<(const Scored &other) const { return distance < other.distance; }
    bool operator>(const Scored &other) const { return distance > other.distance; }
};

// A thread's working memory for one search or insert: the visited bitset, and the records read so far.
struct Scratch {
    std::vector<uint64_t> visited;
    std::vector<uint32_t> touched;  // the bitset's words set, to clear them
    std::vector<char> pool;
    size_t used = 0, recordBytes = 0;
    Counters counters;
    // Kept from one search or insert to the next, so that none allocates: the beam's two heaps (nearest on
    // top, farthest on top), an expanded node's links, the neighbours chosen, a full list's candidates and
    // those kept of them, the inserted node's record and a list being rewritten, the vectors read to prune.
    std::vector<Scored> candidates, found, chosen, pruneCandidates, pruneChosen;
    std::vector<uint32_t> links, list;
    std::vector<char> own, pruneVectors;
    // With --pq: the query's (or inserted vector's) table of centroid dot products, the nodes expanded at
    // level 0 (their records in the pool), vectors decoded from codes, the new code.
    std::vector<float> table, decodeFloats;
    std::vector<Scored> expanded;
    std::vector<char> decoded;
    std::vector<uint8_t> pqCode;

    Scratch(size_t capacity, size_t recordBytes) : visited((capacity + 63) / 64), recordBytes(recordBytes) {}
#if defined(HNSW_PREAD_URING)
    // The thread's ring for batched reads (--batch uring), set up at its first use.
    io_uring ring;
    bool ringReady = false;
    ~Scratch()
    {
        if (ringReady) io_uring_queue_exit(&ring);
    }
    io_uring *uring()
    {
        if (!ringReady) {
            if (int error = io_uring_queue_init(64, &ring, 0); error < 0) {
                std::fprintf(stderr, "io_uring_queue_init: %s\n", std::strerror(-error));
                std::exit(1);
            }
            ringReady = true;
        }
        return &ring;
    }
#endif

    // Offers a scored node to the beam of breadth `ef` (the heaps `candidates` and `found`); whether it was
    // taken (nearer than the farthest found, or the beam not yet full).
    bool offer(const Scored &scored, size_t ef)
    {
        if (found.size() >= ef && scored.distance >= found.front().distance) return false;
        candidates.push_back(scored);
        std::push_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
        found.push_back(scored);
        std::push_heap(found.begin(), found.end());
        if (found.size() > ef) {
            std::pop_heap(found.begin(), found.end());
            found.pop_back();
        }
        return true;
    }

    // Marks `id`; false if it was marked already.
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
    // A new slot for a record (the pointer is valid until the next call).
    uint32_t slot()
    {
        if ((used + 1) * recordBytes > pool.size()) pool.resize(std::max<size_t>(64, 2 * (used + 1)) * recordBytes);
        return uint32_t(used++);
    }
    char *record(uint32_t slot) { return pool.data() + size_t(slot) * recordBytes; }
    void clear()
    {
        clearVisited();
        used = 0;
    }
};

// An upper-layer node's lists (levels 1...level, each a count and M ids) and, if it is cached, its record.
struct Upper {
    std::vector<uint32_t> links;
    std::unique_ptr<char[]> record;
};

class PreadGraph {
  public:
    const size_t dimensions, m, m0, efConstruction, codeBytes, codeOffset, recordBytes, capacity;
    static constexpr size_t stripeCount = 4096;

    PreadGraph(size_t dimensions, size_t m, size_t efConstruction, size_t capacity, int fd, bool inMemory)
        : dimensions(dimensions), m(m), m0(2 * m), efConstruction(efConstruction), codeBytes(scaleBytes + dimensions),
          codeOffset(4 + 4 * 2 * m), recordBytes(codeOffset + scaleBytes + dimensions), capacity(capacity),
          fd_(fd), levels_(new std::atomic<uint8_t>[capacity]), stripes_(new std::mutex[stripeCount]),
          distance_(distanceKernel(chosenKernel())), parameters_{dimensions}, levelMultiplier_(1 / std::log(double(m)))
    {
        for (size_t i = 0; i < capacity; i++) levels_[i].store(0, std::memory_order_relaxed);
        if (inMemory) {
            void *buffer = mmap(nullptr, capacity * recordBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                -1, 0);
            if (buffer == MAP_FAILED) {
                std::perror("mmap");
                std::exit(1);
            }
            memory_ = static_cast<char *>(buffer);
        }
    }

    // Records of nodes at `level` and above are held in memory (INT_MAX: none).
    void setCacheLevel(int level) { cacheLevel_ = level; }
    int cacheLevel() const { return cacheLevel_; }
    // Whether searches read cached nodes from memory (false: from the file, as without a cache).
    bool useCache = true;
    // Level-0 reads of an expanded node's unvisited neighbours in one io_uring submission (--batch uring),
    // without their stripes (a measurement: a list rewritten meanwhile may be read torn, its ids still nodes).
    bool batched = false;
    // Whether more than one thread inserts: without, an insert takes no lock at all (the store's builder
    // inserts with one thread on two cores).
    bool concurrentInserts = true;

    // Writes the build's buffer to the file and frees it: from then on every read is a pread.
    void spill(size_t count)
    {
        if (memory_ == nullptr) return;
        const size_t chunk = 4096 * recordBytes;
        for (size_t at = 0; at < count * recordBytes; at += chunk)
            bench::writeAt(fd_, memory_ + at, std::min(chunk, count * recordBytes - at), at);
        munmap(memory_, capacity * recordBytes);
        memory_ = nullptr;
    }

    // --pq: navigate by the in-memory product-quantized codes of `pq` (DiskANN's way, below); without, the
    // session-31 graph, which reads every node it scores.
    void setQuantizer(const ProductQuantizer *pq)
    {
        pq_ = pq;
        codes_.assign(capacity * pq->m, 0);
    }
    // With --pq, a full level-0 list is pruned with its nodes' 8-bit vectors read from the file (true) or
    // with their codes decoded (false: no read).
    bool pruneByReading = true;
    // With --pq, whether inserts navigate by the codes too (false, --pq-build exact: the session-31 insert,
    // which reads every node it scores; the codes are still written, for the searches).
    bool pqInserts = true;

    // Inserts node `id` (its 8-bit vector `code`); threads may insert different ids at once.
    void insert(uint32_t id, const char *code, Scratch &s)
    {
        if (pq_ != nullptr && pqInserts) {
            insertPQ(id, code, s);
            return;
        }
        if (pq_ != nullptr) {
            buildTable(code, s);
            pq_->encode(s.table.data(), &codes_[size_t(id) * pq_->m]);
        }
        const int level = randomLevel(id);
        levels_[id].store(uint8_t(level), std::memory_order_release);
        std::vector<char> &record = s.own;
        record.assign(recordBytes, 0);
        std::memcpy(record.data() + codeOffset, code, codeBytes);
        if (level > 0) {
            Upper upper;
            upper.links.assign(size_t(level) * (1 + m), 0);
            if (level >= cacheLevel_) {
                upper.record.reset(new char[recordBytes]);
                std::memcpy(upper.record.get(), record.data(), recordBytes);
            }
            std::unique_lock<std::shared_mutex> hold(upperLock_);
            upper_.emplace(id, std::move(upper));
        }
        // The record is in the file before any node links to it.
        writeAt(id, 0, recordBytes, record.data());
        s.counters.writes++;

        // A new top element holds the entry lock for its whole insert, as the published algorithm's
        // implementations do (rare: a level above every other).
        std::unique_lock<std::mutex> top(entryLock_);
        const int maxLevel = maxLevel_;
        const int64_t entry = entry_;
        if (entry < 0) {
            entry_ = id;
            maxLevel_ = level;
            return;
        }
        if (level <= maxLevel) top.unlock();

        s.clear();
        const char *query = record.data() + codeOffset;
        Scored current = scoreEntry(uint32_t(entry), query, s);
        for (int layer = maxLevel; layer > level; layer--) current = searchLayer(query, current, 1, layer, true, s)[0];
        for (int layer = std::min(level, maxLevel); layer >= 0; layer--) {
            const std::vector<Scored> &found = searchLayer(query, current, efConstruction, layer, true, s);
            current = found[0];
            selectNeighbours(found, m, s.chosen, [&](const Scored &c) { return vectorOf(c, s); }, s);
            setOwnLinks(id, layer, s.chosen, s);
            for (const Scored &neighbour : s.chosen) connect(neighbour.id, id, query, layer, neighbour.distance, s);
        }
        if (level > maxLevel) {
            entry_ = id;
            maxLevel_ = level;
        }
    }

    // The `wanted` nearest ids to `query` (an 8-bit vector) found with breadth `ef`, nearest first.
    std::vector<uint32_t> search(const char *query, size_t ef, size_t wanted, Scratch &s)
    {
        int64_t entry;
        int maxLevel;
        {
            std::lock_guard<std::mutex> hold(entryLock_);
            entry = entry_;
            maxLevel = maxLevel_;
        }
        std::vector<uint32_t> ids;
        if (entry < 0) return ids;
        s.clear();
        if (pq_ != nullptr) {
            buildTable(query, s);
            Scored current{codeDistance(uint32_t(entry), s), uint32_t(entry), UINT32_MAX};
            for (int layer = maxLevel; layer > 0; layer--) current = searchUpperPQ(current, 1, layer, false, s)[0];
            const std::vector<Scored> &expanded = searchLevel0PQ(query, current, std::max(ef, wanted), false, s);
            for (size_t i = 0; i < std::min(wanted, expanded.size()); i++) ids.push_back(expanded[i].id);
            return ids;
        }
        Scored current = scoreEntry(uint32_t(entry), query, s);
        for (int layer = maxLevel; layer > 0; layer--) current = searchLayer(query, current, 1, layer, false, s)[0];
        const std::vector<Scored> &found = searchLayer(query, current, std::max(ef, wanted), 0, false, s);
        for (size_t i = 0; i < std::min(wanted, found.size()); i++) ids.push_back(found[i].id);
        return ids;
    }

    // Anonymous bytes the graph keeps, counted from its structures (malloc's 16-byte rounding and header
    // included, libstdc++'s hash map nodes and buckets): levels, upper lists, cached records, locks.
    struct Footprint {
        double levels = 0, upperLists = 0, cachedRecords = 0, map = 0, locks = 0, codes = 0, codebooks = 0;
        size_t upperNodes = 0, cachedNodes = 0;
    };
    Footprint footprint() const
    {
        auto rounded = [](size_t bytes) { return double((bytes + 8 + 15) / 16 * 16); };
        Footprint f;
        f.levels = double(capacity);
        for (const auto &[id, upper] : upper_) {
            f.upperNodes++;
            f.upperLists += rounded(upper.links.size() * sizeof(uint32_t));
            if (upper.record) {
                f.cachedNodes++;
                f.cachedRecords += rounded(recordBytes);
            }
        }
        // a node: next pointer, the key, the Upper (a vector and a pointer), the cached hash; and the buckets
        f.map = double(upper_.size()) * rounded(8 + 8 + sizeof(Upper) + 8) + double(upper_.bucket_count()) * 8;
        f.locks = double(stripeCount * sizeof(std::mutex));
        f.codes = double(codes_.size());
        f.codebooks = pq_ != nullptr ? double(pq_->fixedBytes()) : 0;
        return f;
    }

    int maxLevel() const { return maxLevel_; }
    // FNV-1a of every node's code (the kernels must give the same codes).
    uint64_t codesChecksum() const
    {
        uint64_t hash = 0xcbf29ce484222325ull;
        for (uint8_t byte : codes_) hash = (hash ^ byte) * 0x100000001b3ull;
        return hash;
    }

  private:
    int fd_;
    char *memory_ = nullptr;
    std::unique_ptr<std::atomic<uint8_t>[]> levels_;
    std::unordered_map<uint32_t, Upper> upper_;
    mutable std::shared_mutex upperLock_;
    std::unique_ptr<std::mutex[]> stripes_;
    std::mutex entryLock_;
    int64_t entry_ = -1;
    int maxLevel_ = -1;
    int cacheLevel_ = INT_MAX;
    hnswlib::DISTFUNC<float> distance_;
    QuantizedSpaceParameters parameters_;
    double levelMultiplier_;
    const ProductQuantizer *pq_ = nullptr;
    std::vector<uint8_t> codes_;  // --pq: every node's code, m bytes, in id order

    std::mutex &stripe(uint32_t id) { return stripes_[id % stripeCount]; }

    float distance(const char *a, const char *b, Scratch &s) const
    {
        s.counters.distances++;
        return distance_(a, b, &parameters_);
    }

    // The level of node `id`: ⌊−ln(u) / ln M⌋ for u uniform in (0, 1], from the id alone (so the graph's
    // levels do not depend on the threads' order).
    int randomLevel(uint32_t id) const
    {
        SplitMix64 generator{uint64_t(id) * 0x2545F4914F6CDD1Dull + 0x5EED};
        double u = (double(generator.next() >> 11) + 1) / 9007199254740992.0;
        return std::min(255, int(-std::log(u) * levelMultiplier_));
    }

    Upper *upperOf(uint32_t id) const
    {
        std::shared_lock<std::shared_mutex> hold(upperLock_);
        auto found = upper_.find(id);
        return found == upper_.end() ? nullptr : const_cast<Upper *>(&found->second);
    }

    // The cached record of `id`, or null.
    char *cachedRecord(uint32_t id) const
    {
        if (!useCache || levels_[id].load(std::memory_order_acquire) < cacheLevel_) return nullptr;
        Upper *upper = upperOf(id);
        return upper != nullptr ? upper->record.get() : nullptr;
    }

    void readAt(uint32_t id, size_t offset, size_t length, char *out) const
    {
        if (memory_ != nullptr) std::memcpy(out, memory_ + size_t(id) * recordBytes + offset, length);
        else bench::readAt(fd_, out, length, size_t(id) * recordBytes + offset);
    }
    void writeAt(uint32_t id, size_t offset, size_t length, const char *in)
    {
        if (memory_ != nullptr) std::memcpy(memory_ + size_t(id) * recordBytes + offset, in, length);
        else bench::writeAt(fd_, in, length, size_t(id) * recordBytes + offset);
    }

    // Node `id`'s whole record into `out` (links and vector), from the cache or the file.
    void readRecord(uint32_t id, char *out, Scratch &s) const
    {
        if (const char *cached = cachedRecord(id)) {
            std::memcpy(out, cached, recordBytes);
            s.counters.cached++;
            return;
        }
        readAt(id, 0, recordBytes, out);
        s.counters.level0Reads++;
    }

    // Node `id`'s vector alone into `out`'s vector part (vectors never change once written: no lock).
    void readCode(uint32_t id, char *out, size_t &counter, Scratch &s) const
    {
        if (const char *cached = cachedRecord(id)) {
            std::memcpy(out + codeOffset, cached + codeOffset, codeBytes);
            s.counters.cached++;
            return;
        }
        readAt(id, codeOffset, codeBytes, out + codeOffset);
        counter++;
    }

    // Where the vector of a scored node is: in the build's buffer (in place), or in the search's pool.
    const char *vectorOf(const Scored &c, Scratch &s) const
    {
        if (memory_ != nullptr) return memory_ + size_t(c.id) * recordBytes + codeOffset;
        return s.record(c.slot) + codeOffset;
    }

    // Asks for the cache lines of node `id`'s vector in the build's buffer (the next one to score).
    void prefetchVector(uint32_t id) const
    {
        const char *vector = memory_ + size_t(id) * recordBytes + codeOffset;
        for (size_t line = 0; line < codeBytes; line += 64) __builtin_prefetch(vector + line);
    }

    // Whether reads during an insert take the node's stripe: only when another thread inserts at once.
    bool locking(bool inserting) const { return inserting && concurrentInserts; }

    Scored scoreEntry(uint32_t entry, const char *query, Scratch &s)
    {
        if (memory_ != nullptr) {
            s.counters.level0Reads++;
            return Scored{distance(query, memory_ + size_t(entry) * recordBytes + codeOffset, s), entry, UINT32_MAX};
        }
        uint32_t slot = s.slot();
        {
            std::unique_lock<std::mutex> hold(stripe(entry), std::defer_lock);
            if (concurrentInserts) hold.lock();
            readRecord(entry, s.record(slot), s);
        }
        return Scored{distance(query, s.record(slot) + codeOffset, s), entry, slot};
    }

    // The links of a node at `layer` (> 0) copied into `out` under its stripe when `locked`; their count.
    size_t upperLinks(uint32_t id, int layer, bool locked, uint32_t *out)
    {
        Upper *upper = upperOf(id);
        if (upper == nullptr || size_t(layer) * (1 + m) > upper->links.size()) return 0;
        std::unique_lock<std::mutex> hold(stripe(id), std::defer_lock);
        if (locked) hold.lock();
        const uint32_t *list = &upper->links[size_t(layer - 1) * (1 + m)];
        const size_t count = std::min<size_t>(list[0], m);
        std::memcpy(out, list + 1, count * 4);
        return count;
    }

    // The level-0 links of the scored node `c` copied into `out`: from its record in the pool (read with its
    // vector), or from the build's buffer under its stripe when `locked`; their count.
    size_t level0Links(const Scored &c, bool locked, uint32_t *out, Scratch &s)
    {
        const char *record;
        std::unique_lock<std::mutex> hold(stripe(c.id), std::defer_lock);
        if (memory_ != nullptr) {
            if (locked) hold.lock();
            record = memory_ + size_t(c.id) * recordBytes;
        } else {
            record = s.record(c.slot);
        }
        uint32_t count = 0;
        std::memcpy(&count, record, 4);
        count = std::min<uint32_t>(count, uint32_t(m0));
        std::memcpy(out, record + 4, size_t(count) * 4);
        return count;
    }

    // The beam search of breadth `ef` at `layer` from `start`; the found nodes nearest first, in the scratch
    // (valid until its next search). From the file, level-0 records are read whole (their links are used
    // when they are expanded) and upper-layer nodes' vectors only; in the build's buffer nothing is copied
    // but an expanded node's links. `inserting`: other inserts may run at once, so records are read under
    // their stripe when another thread inserts.
    const std::vector<Scored> &searchLayer(
        const char *query, Scored start, size_t ef, int layer, bool inserting, Scratch &s)
    {
        const bool locked = locking(inserting);
        s.clearVisited();
        s.visit(start.id);
        if (layer == 0 && memory_ == nullptr) {
            // The start was scored in an upper layer by its vector alone: its record, for its links.
            start.slot = s.slot();
            std::unique_lock<std::mutex> hold(stripe(start.id), std::defer_lock);
            if (locked) hold.lock();
            readRecord(start.id, s.record(start.slot), s);
        }
        // Two binary heaps on the scratch's vectors: candidates nearest on top, found farthest on top.
        std::vector<Scored> &candidates = s.candidates, &found = s.found;
        candidates.assign(1, start);
        found.assign(1, start);
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (nearest.distance > found.front().distance && found.size() >= ef) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            const size_t count =
                layer == 0 ? level0Links(nearest, locked, links, s) : upperLinks(nearest.id, layer, locked, links);
            // The unvisited neighbours, then (in the buffer) their vectors prefetched before any is scored.
            size_t fresh = 0;
            for (size_t i = 0; i < count; i++)
                if (links[i] < capacity && s.visit(links[i])) links[fresh++] = links[i];
#if defined(HNSW_PREAD_URING)
            if (batched && layer == 0 && memory_ == nullptr) {
                expandBatched(query, links, fresh, ef, s);
                continue;
            }
#endif
            // The vectors in the buffer asked for one ahead of their scoring (asking for all of them at once
            // stalled on the CPU's outstanding misses: 45% of the search's samples on the prefetches).
            if (memory_ != nullptr && fresh > 0) prefetchVector(links[0]);
            for (size_t i = 0; i < fresh; i++) {
                const uint32_t next = links[i];
                if (memory_ != nullptr && i + 1 < fresh) prefetchVector(links[i + 1]);
                uint32_t slot = UINT32_MAX;
                const char *vector;
                if (memory_ != nullptr) {
                    vector = memory_ + size_t(next) * recordBytes + codeOffset;
                    (layer == 0 ? s.counters.level0Reads : s.counters.upperReads)++;
                } else {
                    slot = s.slot();
                    char *record = s.record(slot);
                    if (layer == 0) {
                        std::unique_lock<std::mutex> hold(stripe(next), std::defer_lock);
                        if (locked) hold.lock();
                        readRecord(next, record, s);
                    } else {
                        readCode(next, record, s.counters.upperReads, s);
                    }
                    vector = record + codeOffset;
                }
                if (!s.offer(Scored{distance(query, vector, s), next, slot}, ef) && slot != UINT32_MAX)
                    s.used--;  // the slot is not kept
            }
        }
        std::sort_heap(found.begin(), found.end());  // nearest first
        return found;
    }

#if defined(HNSW_PREAD_URING)
    // Reads the nodes `fresh` of `links` (level 0, unvisited) with one io_uring submission and scores them
    // into the beam: the cached ones copied, the others read from the file by the ring.
    void expandBatched(const char *query, const uint32_t *links, size_t fresh, size_t ef, Scratch &s)
    {
        if (fresh == 0) return;
        const uint32_t first = s.slot();
        for (size_t i = 1; i < fresh; i++) (void)s.slot();  // contiguous slots; pointers taken after
        io_uring *ring = s.uring();
        unsigned queued = 0;
        for (size_t i = 0; i < fresh; i++) {
            char *record = s.record(first + uint32_t(i));
            if (const char *cached = cachedRecord(links[i])) {
                std::memcpy(record, cached, recordBytes);
                s.counters.cached++;
                continue;
            }
            io_uring_sqe *sqe = io_uring_get_sqe(ring);
            io_uring_prep_read(sqe, fd_, record, unsigned(recordBytes), uint64_t(links[i]) * recordBytes);
            queued++;
        }
        if (queued > 0) {
            if (int error = io_uring_submit_and_wait(ring, queued); error < 0) {
                std::fprintf(stderr, "io_uring_submit_and_wait: %s\n", std::strerror(-error));
                std::exit(1);
            }
            s.counters.submissions++;
            s.counters.level0Reads += queued;
            for (unsigned done = 0; done < queued; done++) {
                io_uring_cqe *cqe;
                if (io_uring_wait_cqe(ring, &cqe) < 0 || cqe->res != int(recordBytes)) {
                    std::fprintf(stderr, "a batched read failed\n");
                    std::exit(1);
                }
                io_uring_cqe_seen(ring, cqe);
            }
        }
        for (size_t i = 0; i < fresh; i++) {
            const uint32_t slot = first + uint32_t(i);
            (void)s.offer(Scored{distance(query, s.record(slot) + codeOffset, s), links[i], slot}, ef);
        }
    }
#endif

    // The neighbour-selection heuristic: from `candidates` (nearest first; `vector` gives each one's vector)
    // into `chosen`, keep a candidate only if it is nearer to the base than to every one kept before it; at
    // most `most`.
    template <typename Vector>
    void selectNeighbours(
        const std::vector<Scored> &candidates, size_t most, std::vector<Scored> &chosen, Vector vector, Scratch &s)
    {
        chosen.clear();
        for (const Scored &candidate : candidates) {
            if (chosen.size() >= most) break;
            const char *mine = vector(candidate);
            bool kept = true;
            for (const Scored &other : chosen) {
                if (distance(mine, vector(other), s) < candidate.distance) {
                    kept = false;
                    break;
                }
            }
            if (kept) chosen.push_back(candidate);
        }
    }

    // Node `id`'s own list at `layer`, written before any neighbour links back to it.
    void setOwnLinks(uint32_t id, int layer, const std::vector<Scored> &chosen, Scratch &s)
    {
        std::unique_lock<std::mutex> hold(stripe(id), std::defer_lock);
        if (concurrentInserts) hold.lock();
        if (layer == 0) {
            std::vector<uint32_t> &list = s.list;
            list.assign(1 + m0, 0);
            list[0] = uint32_t(chosen.size());
            for (size_t i = 0; i < chosen.size(); i++) list[1 + i] = chosen[i].id;
            writeLinks0(id, list.data());
        } else {
            uint32_t *list = &upperOf(id)->links[size_t(layer - 1) * (1 + m)];
            list[0] = uint32_t(chosen.size());
            for (size_t i = 0; i < chosen.size(); i++) list[1 + i] = chosen[i].id;
        }
    }

    // The level-0 list (count and ids) of `id` to the file and, if cached, to its record (under its stripe).
    void writeLinks0(uint32_t id, const uint32_t *list)
    {
        const size_t bytes = 4 * (1 + std::min<size_t>(list[0], m0));
        writeAt(id, 0, bytes, reinterpret_cast<const char *>(list));
        if (levels_[id].load(std::memory_order_acquire) >= cacheLevel_) {
            if (Upper *upper = upperOf(id)) std::memcpy(upper->record.get(), list, bytes);
        }
    }

    // Links `neighbour` back to `id` (whose vector is `code`) at `layer` (their distance `d`); a full list is
    // pruned by the heuristic over its nodes and `id`, which reads the vectors of the list's nodes (in the
    // build's buffer they are scored in place; the list is rewritten there in place too).
    void connect(uint32_t neighbour, uint32_t id, const char *code, int layer, float d, Scratch &s)
    {
        const size_t most = layer == 0 ? m0 : m;
        std::unique_lock<std::mutex> hold(stripe(neighbour), std::defer_lock);
        if (concurrentInserts) hold.lock();
        // The list to change: in place (the buffer's record, or an upper list), or a copy read from the file.
        uint32_t *list;
        const char *own;  // the neighbour's vector
        if (layer == 0 && memory_ == nullptr) {
            s.pruneVectors.resize((most + 2) * recordBytes);
            char *record = s.pruneVectors.data() + (most + 1) * recordBytes;
            readRecord(neighbour, record, s);
            s.list.assign(1 + most, 0);
            std::memcpy(s.list.data(), record, 4 * (1 + m0));
            list = s.list.data();
            own = record + codeOffset;
        } else {
            list = layer == 0 ? reinterpret_cast<uint32_t *>(memory_ + size_t(neighbour) * recordBytes)
                              : &upperOf(neighbour)->links[size_t(layer - 1) * (1 + m)];
            own = nullptr;
        }
        const uint32_t count = std::min<uint32_t>(list[0], uint32_t(most));
        for (uint32_t i = 1; i <= count; i++)
            if (list[i] == id) return;
        if (count < most) {
            list[1 + count] = id;
            list[0] = count + 1;  // after the id: a reader never sees a count past the ids written
        } else {
            // The heuristic from the neighbour's point of view over its list and `id`.
            s.pruneVectors.resize((most + 2) * recordBytes);
            if (own == nullptr) {
                if (memory_ != nullptr) {
                    own = memory_ + size_t(neighbour) * recordBytes + codeOffset;
                } else {
                    char *record = s.pruneVectors.data() + (most + 1) * recordBytes;
                    readCode(neighbour, record, s.counters.upperReads, s);
                    own = record + codeOffset;
                }
            }
            std::vector<Scored> &candidates = s.pruneCandidates;
            candidates.clear();
            for (uint32_t i = 0; i < count; i++) {
                const uint32_t other = list[1 + i];
                const char *vector;
                if (memory_ != nullptr) {
                    vector = memory_ + size_t(other) * recordBytes + codeOffset;
                    s.counters.pruneReads++;
                } else {
                    char *record = s.pruneVectors.data() + size_t(i) * recordBytes;
                    readCode(other, record, s.counters.pruneReads, s);
                    vector = record + codeOffset;
                }
                candidates.push_back(Scored{distance(own, vector, s), other, i});
            }
            candidates.push_back(Scored{d, id, count});  // `id`'s vector is the insert's own: no read
            std::sort(candidates.begin(), candidates.end());
            auto vectorOfCandidate = [&](const Scored &c) -> const char * {
                if (c.id == id) return code;
                if (memory_ != nullptr) return memory_ + size_t(c.id) * recordBytes + codeOffset;
                return s.pruneVectors.data() + size_t(c.slot) * recordBytes + codeOffset;
            };
            selectNeighbours(candidates, most, s.pruneChosen, vectorOfCandidate, s);
            // The ids first, then the count: in place, a reader of the list sees whole ids.
            for (size_t i = 0; i < s.pruneChosen.size(); i++) list[1 + i] = s.pruneChosen[i].id;
            for (size_t i = s.pruneChosen.size(); i < most; i++) list[1 + i] = 0;
            list[0] = uint32_t(s.pruneChosen.size());
        }
        if (layer == 0 && memory_ == nullptr) {
            writeLinks0(neighbour, list);
            s.counters.writes++;
        } else if (layer == 0) {
            s.counters.writes++;
            if (levels_[neighbour].load(std::memory_order_acquire) >= cacheLevel_) {
                if (Upper *upper = upperOf(neighbour)) std::memcpy(upper->record.get(), list, 4 * (1 + most));
            }
        }
    }

    // ---- --pq: DiskANN's navigation. A code of every node in memory scores the candidates; only the nodes
    // a search expands are read (their level-0 list and 8-bit vector, one pread), and their 8-bit vectors
    // give the distance that orders the result (and, for an insert, the neighbour-selection heuristic's).
    // The upper layers are navigated by codes alone (no read); their heuristic uses decoded codes.

    void buildTable(const char *query, Scratch &s) const
    {
        s.table.resize(pq_->tableFloats());
        pq_->buildTable(query, s.table.data());
        s.counters.tables++;
    }

    float codeDistance(uint32_t id, Scratch &s) const
    {
        s.counters.codeDistances++;
        return pq_->distance(s.table.data(), &codes_[size_t(id) * pq_->m]);
    }

    // Node `id`'s code decoded into 8-bit vector number `slot` of the scratch's `decoded` (valid until it grows).
    const char *decodeInto(uint32_t id, size_t slot, Scratch &s) const
    {
        if (s.decoded.size() < (slot + 1) * codeBytes) s.decoded.resize(std::max((slot + 1) * codeBytes, 2 * s.decoded.size()));
        char *out = s.decoded.data() + slot * codeBytes;
        pq_->decode(&codes_[size_t(id) * pq_->m], reinterpret_cast<uint8_t *>(out), s.decodeFloats);
        s.counters.decoded++;
        return out;
    }

    void insertPQ(uint32_t id, const char *code, Scratch &s)
    {
        const int level = randomLevel(id);
        // Its code first (from its table, which the insert's searches use): in memory before any node links to it.
        buildTable(code, s);
        pq_->encode(s.table.data(), &codes_[size_t(id) * pq_->m]);
        levels_[id].store(uint8_t(level), std::memory_order_release);
        std::vector<char> &record = s.own;
        record.assign(recordBytes, 0);
        std::memcpy(record.data() + codeOffset, code, codeBytes);
        if (level > 0) {
            Upper upper;
            upper.links.assign(size_t(level) * (1 + m), 0);
            std::unique_lock<std::shared_mutex> hold(upperLock_);
            upper_.emplace(id, std::move(upper));
        }
        writeAt(id, 0, recordBytes, record.data());
        s.counters.writes++;

        std::unique_lock<std::mutex> top(entryLock_);
        const int maxLevel = maxLevel_;
        const int64_t entry = entry_;
        if (entry < 0) {
            entry_ = id;
            maxLevel_ = level;
            return;
        }
        if (level <= maxLevel) top.unlock();

        s.clear();
        const char *query = record.data() + codeOffset;
        Scored current{codeDistance(uint32_t(entry), s), uint32_t(entry), UINT32_MAX};
        for (int layer = maxLevel; layer > level; layer--) current = searchUpperPQ(current, 1, layer, true, s)[0];
        for (int layer = std::min(level, maxLevel); layer >= 1; layer--) {
            std::vector<Scored> &found = s.pruneCandidates;
            found = searchUpperPQ(current, efConstruction, layer, true, s);
            current = found[0];
            for (size_t i = 0; i < found.size(); i++) {
                (void)decodeInto(found[i].id, i, s);
                found[i].slot = uint32_t(i);
            }
            selectNeighbours(found, m, s.chosen,
                [&](const Scored &c) { return (const char *)s.decoded.data() + size_t(c.slot) * codeBytes; }, s);
            setOwnLinks(id, layer, s.chosen, s);
            for (const Scored &neighbour : s.chosen) connectUpperPQ(neighbour.id, id, query, layer, neighbour.distance, s);
        }
        const std::vector<Scored> &expanded = searchLevel0PQ(query, current, efConstruction, true, s);
        selectNeighbours(expanded, m, s.chosen, [&](const Scored &c) { return vectorOf(c, s); }, s);
        setOwnLinks(id, 0, s.chosen, s);
        for (const Scored &neighbour : s.chosen) connectLevel0PQ(neighbour, id, query, s);
        if (level > maxLevel) {
            entry_ = id;
            maxLevel_ = level;
        }
    }

    // The beam search of breadth `ef` at `layer` (> 0) by codes alone: the found nodes nearest first.
    const std::vector<Scored> &searchUpperPQ(Scored start, size_t ef, int layer, bool inserting, Scratch &s)
    {
        const bool locked = locking(inserting);
        s.clearVisited();
        s.visit(start.id);
        std::vector<Scored> &candidates = s.candidates, &found = s.found;
        candidates.assign(1, start);
        found.assign(1, start);
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (nearest.distance > found.front().distance && found.size() >= ef) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            const size_t count = upperLinks(nearest.id, layer, locked, links);
            for (size_t i = 0; i < count; i++) {
                const uint32_t next = links[i];
                if (next >= capacity || !s.visit(next)) continue;
                (void)s.offer(Scored{codeDistance(next, s), next, UINT32_MAX}, ef);
            }
        }
        std::sort_heap(found.begin(), found.end());
        return found;
    }

    // DiskANN's beam search at level 0 (breadth `ef`): candidates are scored by their codes; the nearest one
    // not yet expanded is read (its record: list and 8-bit vector) and expanded, until the nearest candidate
    // left is farther than the ef-th found. Returns the expanded nodes, nearest first by their 8-bit vectors
    // (their records in the scratch's pool, or in place in the build's buffer).
    const std::vector<Scored> &searchLevel0PQ(const char *query, Scored start, size_t ef, bool inserting, Scratch &s)
    {
        const bool locked = locking(inserting);
        s.clearVisited();
        s.visit(start.id);
        std::vector<Scored> &candidates = s.candidates, &found = s.found, &expanded = s.expanded;
        start.slot = UINT32_MAX;
        candidates.assign(1, start);
        found.assign(1, start);
        expanded.clear();
        s.links.resize(m0 + 1);
        uint32_t *links = s.links.data();
        const uint8_t *codes = codes_.data();
        const size_t codeSize = pq_->m;
        while (!candidates.empty()) {
            const Scored nearest = candidates.front();
            if (nearest.distance > found.front().distance && found.size() >= ef) break;
            std::pop_heap(candidates.begin(), candidates.end(), std::greater<Scored>());
            candidates.pop_back();
            Scored read{0, nearest.id, UINT32_MAX};
            if (memory_ == nullptr) {
                read.slot = s.slot();
                std::unique_lock<std::mutex> hold(stripe(read.id), std::defer_lock);
                if (locked) hold.lock();
                readRecord(read.id, s.record(read.slot), s);
            } else {
                s.counters.level0Reads++;
            }
            read.distance = distance(query, vectorOf(read, s), s);
            expanded.push_back(read);
            const size_t count = level0Links(read, locked, links, s);
            size_t fresh = 0;
            for (size_t i = 0; i < count; i++)
                if (links[i] < capacity && s.visit(links[i])) links[fresh++] = links[i];
            if (fresh > 0) __builtin_prefetch(codes + size_t(links[0]) * codeSize);
            for (size_t i = 0; i < fresh; i++) {
                if (i + 1 < fresh) __builtin_prefetch(codes + size_t(links[i + 1]) * codeSize);
                (void)s.offer(Scored{codeDistance(links[i], s), links[i], UINT32_MAX}, ef);
            }
        }
        std::sort(expanded.begin(), expanded.end());
        return expanded;
    }

    // Links `neighbour` (expanded by this insert: its record read then) back to `id` (vector `code`) at level
    // 0. With one insert thread the record read during the search is current; with more, its list is read
    // again under its stripe. A full list is pruned by the heuristic over its nodes and `id`, with the
    // list's nodes' 8-bit vectors read (pruneByReading) or decoded from their codes.
    void connectLevel0PQ(const Scored &neighbour, uint32_t id, const char *code, Scratch &s)
    {
        const size_t most = m0;
        std::unique_lock<std::mutex> hold(stripe(neighbour.id), std::defer_lock);
        if (concurrentInserts) hold.lock();
        uint32_t *list;
        const char *own = vectorOf(neighbour, s);
        if (memory_ == nullptr) {
            s.list.assign(1 + most, 0);
            char *record = s.record(neighbour.slot);
            if (concurrentInserts) {
                readAt(neighbour.id, 0, 4 * (1 + m0), record);
                s.counters.linkReads++;
            }
            std::memcpy(s.list.data(), record, 4 * (1 + m0));
            list = s.list.data();
        } else {
            list = reinterpret_cast<uint32_t *>(memory_ + size_t(neighbour.id) * recordBytes);
        }
        const uint32_t count = std::min<uint32_t>(list[0], uint32_t(most));
        for (uint32_t i = 1; i <= count; i++)
            if (list[i] == id) return;
        if (count < most) {
            list[1 + count] = id;
            list[0] = count + 1;
        } else {
            std::vector<Scored> &candidates = s.pruneCandidates;
            candidates.clear();
            s.pruneVectors.resize((most + 1) * recordBytes);
            for (uint32_t i = 0; i < count; i++) {
                const uint32_t other = list[1 + i];
                const char *vector;
                if (!pruneByReading) {
                    vector = decodeInto(other, i, s);
                } else if (memory_ != nullptr) {
                    vector = memory_ + size_t(other) * recordBytes + codeOffset;
                    s.counters.pruneReads++;
                } else {
                    char *record = s.pruneVectors.data() + size_t(i) * recordBytes;
                    readCode(other, record, s.counters.pruneReads, s);
                    vector = record + codeOffset;
                }
                candidates.push_back(Scored{distance(own, vector, s), other, i});
            }
            candidates.push_back(Scored{neighbour.distance, id, count});
            std::sort(candidates.begin(), candidates.end());
            auto vectorOfCandidate = [&](const Scored &c) -> const char * {
                if (c.id == id) return code;
                if (!pruneByReading) return s.decoded.data() + size_t(c.slot) * codeBytes;
                if (memory_ != nullptr) return memory_ + size_t(c.id) * recordBytes + codeOffset;
                return s.pruneVectors.data() + size_t(c.slot) * recordBytes + codeOffset;
            };
            selectNeighbours(candidates, most, s.pruneChosen, vectorOfCandidate, s);
            for (size_t i = 0; i < s.pruneChosen.size(); i++) list[1 + i] = s.pruneChosen[i].id;
            for (size_t i = s.pruneChosen.size(); i < most; i++) list[1 + i] = 0;
            list[0] = uint32_t(s.pruneChosen.size());
        }
        if (memory_ == nullptr) {
            writeAt(neighbour.id, 0, 4 * (1 + std::min<size_t>(list[0], m0)), reinterpret_cast<const char *>(list));
            // The pool's copy stays current for a later use in this insert (none: each neighbour is linked once).
            std::memcpy(s.record(neighbour.slot), list, 4 * (1 + m0));
        }
        s.counters.writes++;
    }

    // Links `neighbour` back to `id` at `layer` (> 0; lists in memory); a full list is pruned with the codes
    // of its nodes decoded (the neighbour's too) and `id`'s own 8-bit vector: no read.
    void connectUpperPQ(uint32_t neighbour, uint32_t id, const char *code, int layer, float d, Scratch &s)
    {
        std::unique_lock<std::mutex> hold(stripe(neighbour), std::defer_lock);
        if (concurrentInserts) hold.lock();
        uint32_t *list = &upperOf(neighbour)->links[size_t(layer - 1) * (1 + m)];
        const uint32_t count = std::min<uint32_t>(list[0], uint32_t(m));
        for (uint32_t i = 1; i <= count; i++)
            if (list[i] == id) return;
        if (count < m) {
            list[1 + count] = id;
            list[0] = count + 1;
            return;
        }
        // Decoded slots: the list's nodes 0..count-1, the neighbour at `count`.
        std::vector<Scored> &candidates = s.pruneCandidates;
        candidates.clear();
        (void)decodeInto(neighbour, count, s);
        for (uint32_t i = 0; i < count; i++) (void)decodeInto(list[1 + i], i, s);
        const char *own = s.decoded.data() + size_t(count) * codeBytes;
        for (uint32_t i = 0; i < count; i++)
            candidates.push_back(Scored{distance(own, s.decoded.data() + size_t(i) * codeBytes, s), list[1 + i], i});
        candidates.push_back(Scored{d, id, count});
        std::sort(candidates.begin(), candidates.end());
        auto vectorOfCandidate = [&](const Scored &c) -> const char * {
            if (c.id == id) return code;
            return s.decoded.data() + size_t(c.slot) * codeBytes;
        };
        selectNeighbours(candidates, m, s.pruneChosen, vectorOfCandidate, s);
        for (size_t i = 0; i < s.pruneChosen.size(); i++) list[1 + i] = s.pruneChosen[i].id;
        for (size_t i = s.pruneChosen.size(); i < m; i++) list[1 + i] = 0;
        list[0] = uint32_t(s.pruneChosen.size());
    }
};

}  // namespace bench

using namespace bench;

int main(int argc, char **argv)
{
    size_t n = 100000, queryCount = 200, threads = 2, m = 16, efConstruction = 100, dimensions = 384, k = 10;
    std::string dir = "/tmp/hnsw-pread", efs = "auto", build = "file";
    double cacheMB = 4;
    bool cold = false;
    std::string batching = "none";
    size_t pqM = 0, pqSample = 20000, pqIterations = 10;
    std::string pqPrune = "read", npyPath, pqBuild = "pq";
    bool cacheGiven = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() { return optionValue(argc, argv, i); };
        if (a == "--vectors") n = std::stoul(value());
        else if (a == "--queries") queryCount = std::stoul(value());
        else if (a == "--threads") threads = std::stoul(value());
        else if (a == "--m") m = std::stoul(value());
        else if (a == "--ef-construction") efConstruction = std::stoul(value());
        else if (a == "--dir") dir = value();
        else if (a == "--ef") efs = value();
        else if (a == "--build") build = value();
        else if (a == "--cache-mb") {
            cacheMB = std::stod(value());
            cacheGiven = true;
        }
        else if (a == "--pq") pqM = std::stoul(value());
        else if (a == "--pq-sample") pqSample = std::stoul(value());
        else if (a == "--pq-iterations") pqIterations = std::stoul(value());
        else if (a == "--pq-prune") pqPrune = value();
        else if (a == "--pq-build") pqBuild = value();
        else if (a == "--npy") npyPath = value();
        else if (a == "--cold") cold = true;
        else if (a == "--batch") batching = value();
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
#if !defined(HNSW_PREAD_URING)
    if (batching != "none") {
        std::fprintf(stderr, "--batch uring needs a build with -DHNSW_PREAD_URING ... -luring\n");
        return 2;
    }
#endif
    if (build != "file" && build != "memory") {
        std::fprintf(stderr, "--build is file or memory\n");
        return 2;
    }
    if (pqM > 0 && (dimensions % pqM != 0 || (dimensions / pqM) % 4 != 0)) {
        std::fprintf(stderr, "--pq M needs M to divide %zu into sub-vectors of a multiple of 4 dimensions\n",
            dimensions);
        return 2;
    }
    if (pqPrune != "read" && pqPrune != "pq") {
        std::fprintf(stderr, "--pq-prune is read or pq\n");
        return 2;
    }
    if (pqM > 0 && batching != "none") {
        std::fprintf(stderr, "--pq and --batch do not go together\n");
        return 2;
    }
    // With --pq the node cache is off unless asked for (the codes replace it; searches read only expanded nodes).
    if (pqM > 0 && !cacheGiven) cacheMB = 0;
    if (pqM > 0 && cacheMB > 0) {
        std::fprintf(stderr, "--pq keeps no node cache: give --cache-mb 0 or leave it out\n");
        return 2;
    }
    // --npy: real vectors (float32, n x 384, normalized, e.g. from embed_docs.py or vectors.py): the last
    // `queryCount` rows are the queries, the rows before them (at most --vectors) the base.
    std::vector<float> npy;
    if (!npyPath.empty()) {
        size_t rows = 0, columns = 0;
        if (!readNpy(npyPath, rows, columns, npy)) return 2;
        if (columns != dimensions || rows <= queryCount) {
            std::fprintf(stderr, "%s: %zu x %zu, needs %zu columns and more than %zu rows\n", npyPath.c_str(), rows,
                columns, dimensions, queryCount);
            return 2;
        }
        n = std::min(n, rows - queryCount);
    }
    const size_t wanted = k + std::max<size_t>(k, 8);  // LocalANNIndex.candidates(for:)
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    mkdir(dir.c_str(), 0755);
    std::string nodesPath = dir + "/nodes.bin";
    int nodesFD = open(nodesPath.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    std::string floatsPath = dir + "/floats.bin";
    int floatsFD = open(floatsPath.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (nodesFD < 0 || floatsFD < 0) {
        std::perror(dir.c_str());
        return 1;
    }
    printMemory("start");
    PreadGraph graph(dimensions, m, efConstruction, n, nodesFD, build == "memory");
    graph.batched = batching == "uring";
    graph.concurrentInserts = threads > 1;
    graph.pruneByReading = pqPrune == "read";
    graph.pqInserts = pqBuild != "exact";
    // The cache: the records of the nodes at the lowest level L >= 1 whose expected count (n / M^L) fits.
    if (cacheMB > 0) {
        for (int level = 1; level < 16; level++) {
            double expected = double(n) / std::pow(double(m), level);
            if (expected * double(graph.recordBytes) <= cacheMB * 1048576) {
                graph.setCacheLevel(level);
                break;
            }
        }
    }
    if (npy.empty())
        std::printf("%zu vectors x %zu d in %zu clusters (spread 1.0), ", n, dimensions, std::max<size_t>(10, n / 100));
    else
        std::printf("%zu vectors x %zu d from %s (queries: its last %zu rows), ", n, dimensions, npyPath.c_str(),
            queryCount);
    std::printf("M %zu (M0 %zu), ef_construction %zu, %zu "
                "candidates re-ranked, %zu queries, %zu insert threads, records of %zu bytes built %s, node cache "
                "%.1f MB (levels >= %d), kernel %d\n",
        m, 2 * m, efConstruction, wanted, queryCount, threads,
        graph.recordBytes, build == "file" ? "through pread/pwrite" : "in an anonymous buffer, then written",
        cacheMB, graph.cacheLevel() == INT_MAX ? -1 : graph.cacheLevel(), chosenKernel());

    // Build: generate a batch (floats to floats.bin for the re-ranking and the truth), insert it with
    // `threads` threads, each with its own scratch.
    Clustered generator(dimensions, std::max<size_t>(10, n / 100), 1.0f, 0x10CA15EA);
    auto nextVector = [&](size_t index, float *out) {
        if (npy.empty()) (void)generator.next(out);
        else std::memcpy(out, &npy[index * dimensions], dimensions * sizeof(float));
    };
    // --pq: the codebooks, trained on the first --pq-sample vectors (a second generator with the same seed
    // gives the same vectors the build then inserts).
    ProductQuantizer pq;
    if (pqM > 0) {
        const size_t count = std::min(n, pqSample);
        std::vector<float> sample(count * dimensions);
        if (npy.empty()) {
            Clustered again(dimensions, std::max<size_t>(10, n / 100), 1.0f, 0x10CA15EA);
            for (size_t i = 0; i < count; i++) (void)again.next(&sample[i * dimensions]);
        } else {
            std::memcpy(sample.data(), npy.data(), sample.size() * sizeof(float));
        }
        auto wall0 = std::chrono::steady_clock::now();
        double cpu0 = processCPU();
        pq.train(sample.data(), count, dimensions, pqM, pqIterations, 0x9E0C0DE5);
        graph.setQuantizer(&pq);
        std::printf("pq: %zu sub-vectors of %zu dimensions x 256 centroids, trained on the first %zu vectors "
                    "(%zu rounds): %.1f CPU-s, %.1f s wall; codes %zu bytes a node; codebooks %.2f MB fixed; full "
                    "lists pruned %s; kernel %s\n",
            pqM, dimensions / pqM, count, pqIterations, processCPU() - cpu0,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(), pqM,
            pq.fixedBytes() / 1048576.0,
            pqPrune == "read" ? "with their nodes' 8-bit vectors read" : "with their nodes' codes decoded",
            pq.kernel == tableDotsPortable ? "portable" : pq.kernel == tableDotsAVX2 ? "AVX2" : "AVX-512 VNNI");
    }
    const size_t batch = 4096;
    std::vector<float> vectors(batch * dimensions);
    std::vector<char> codes(batch * graph.codeBytes);
    std::vector<std::unique_ptr<Scratch>> scratches;
    for (size_t t = 0; t < std::max<size_t>(1, threads); t++)
        scratches.push_back(std::make_unique<Scratch>(n, graph.recordBytes));
    double insertCPU = 0, insertWall = 0;
    resetPeak();
    printMemory("before the build");
    for (size_t first = 0; first < n; first += batch) {
        size_t count = std::min(batch, n - first);
        for (size_t i = 0; i < count; i++) nextVector(first + i, &vectors[i * dimensions]);
        writeAt(floatsFD, vectors.data(), count * dimensions * sizeof(float), first * dimensions * sizeof(float));
        for (size_t i = 0; i < count; i++)
            quantized(&vectors[i * dimensions], dimensions, reinterpret_cast<uint8_t *>(&codes[i * graph.codeBytes]));
        double cpu0 = processCPU();
        auto wall0 = std::chrono::steady_clock::now();
        std::atomic<size_t> next{0};
        auto work = [&](Scratch *scratch) {
            for (size_t i = next++; i < count; i = next++)
                graph.insert(uint32_t(first + i), &codes[i * graph.codeBytes], *scratch);
        };
        size_t workers = std::max<size_t>(1, std::min(threads, count / 64 + 1));
        std::vector<std::thread> pool;
        for (size_t t = 1; t < workers; t++) pool.emplace_back(work, scratches[t].get());
        work(scratches[0].get());
        for (auto &thread : pool) thread.join();
        insertWall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        insertCPU += processCPU() - cpu0;
        if ((first / batch) % 8 == 7) {
            std::printf("  ... %zu inserted, %.1f CPU-s\n", first + count, insertCPU);
            std::fflush(stdout);
        }
    }
    Counters built;
    for (auto &scratch : scratches) built.add(scratch->counters);
    std::printf("build: %.1f us CPU a vector (%.1f CPU-s, %.1f s wall, %zu threads); a vector read %.0f records at "
                "level 0, %.0f upper-layer vectors and %.0f vectors to prune full lists (%.0f reads%s), %.0f from "
                "the cache, and wrote %.1f records or link lists; %.0f distances an insert\n",
        insertCPU / n * 1e6, insertCPU, insertWall, threads, double(built.level0Reads) / n,
        double(built.upperReads) / n, double(built.pruneReads) / n, double(built.fileReads()) / n,
        build == "file" ? (graph.batched ? " with pread and io_uring" : " with pread") : " by memcpy",
        double(built.cached) / n, double(built.writes) / n, double(built.distances) / n);
    if (pqM > 0)
        std::printf("  pq: a vector read %.1f level-0 records it expanded, %.1f lists again to link back, %.1f "
                    "vectors to prune; %.0f code distances, %.1f tables, %.1f codes decoded\n",
            double(built.level0Reads) / n, double(built.linkReads) / n, double(built.pruneReads) / n,
            double(built.codeDistances) / n, double(built.tables) / n, double(built.decoded) / n);
    if (pqM > 0) std::printf("  pq: codes checksum %016llx\n", (unsigned long long)graph.codesChecksum());
    if (graph.batched) std::printf("  level-0 reads batched: %.0f io_uring submissions an insert\n",
        double(built.submissions) / n);
    printMemory("after the build");
    if (build == "memory") {
        auto wall0 = std::chrono::steady_clock::now();
        double cpu0 = processCPU();
        graph.spill(n);
        std::printf("the buffer written to %s and freed: %.1f s wall, %.1f CPU-s\n", nodesPath.c_str(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(), processCPU() - cpu0);
        printMemory("after the spill");
    }
    scratches.clear();  // the build's pools and bitsets
    std::vector<float>().swap(vectors);
    std::vector<char>().swap(codes);

    const auto f = graph.footprint();
    const double perN = 1.0 / double(n);
    const double visitedBits = 0.125;  // one searching thread's bitset
    std::printf("anonymous per element: level %.1f, upper lists %.1f (%zu nodes above level 0, top level %d), "
                "their map %.1f, cached records %.1f (%zu nodes), pq codes %.1f, visited bitset %.3f a searching "
                "thread: %.1f bytes; plus %.2f MB of striped locks and %.2f MB of codebooks fixed\n",
        f.levels * perN, f.upperLists * perN, f.upperNodes, graph.maxLevel(), f.map * perN, f.cachedRecords * perN,
        f.cachedNodes, f.codes * perN, visitedBits,
        (f.levels + f.upperLists + f.map + f.cachedRecords + f.codes) * perN + visitedBits, f.locks / 1048576,
        f.codebooks / 1048576);
    std::printf("node file: %zu bytes a node (links %zu, vector %zu): %.1f MB\n", graph.recordBytes, graph.codeOffset,
        graph.codeBytes, double(n * graph.recordBytes) / 1048576);

    // Queries: the vectors that follow the base (as local-search), truth by an exact float scan of floats.bin.
    std::vector<float> queries(queryCount * dimensions);
    for (size_t q = 0; q < queryCount; q++) {
        if (npy.empty()) (void)generator.next(&queries[q * dimensions]);
        else std::memcpy(&queries[q * dimensions], &npy[(npy.size() / dimensions - queryCount + q) * dimensions],
            dimensions * sizeof(float));
    }
    std::vector<float>().swap(npy);
    const auto best = exactBest(floatsFD, n, dimensions, queries, k);

    std::vector<size_t> breadths;
    for (size_t start = 0; start <= efs.size();) {
        size_t comma = efs.find(',', start);
        if (comma == std::string::npos) comma = efs.size();
        std::string e = efs.substr(start, comma - start);
        breadths.push_back(e == "auto" ? autoBreadth(n) : std::stoul(e));
        start = comma + 1;
    }
    std::printf("| ef_search | cache | page cache | recall@10 | CPU ms a search p50 / p99 (mean) | wall ms p50 / p99 | preads a "
                "search (upper / level 0) | cache hits | re-rank CPU ms | VmHWM MB | RssAnon MB | RssFile MB |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    std::vector<uint8_t> code(graph.codeBytes);
    Scratch scratch(n, graph.recordBytes);
    std::vector<bool> cacheModes = {graph.cacheLevel() != INT_MAX};
    if (graph.cacheLevel() != INT_MAX) cacheModes.push_back(false);
    std::vector<bool> coldModes = {false};
    if (cold) {
        coldModes.push_back(true);
        fdatasync(nodesFD);  // dirty pages cannot be dropped
    }
    std::vector<bool> batchModes = {graph.batched};
    if (graph.batched) batchModes.push_back(false);
    for (size_t ef : breadths) {
        for (bool batching : batchModes)
        for (bool dropped : coldModes)
        for (bool cached : cacheModes) {
            graph.useCache = cached;
            graph.batched = batching;
            resetPeak();
            std::vector<double> wall, cpu;
            double rerankCPU = 0;
            size_t hits = 0;
            scratch.counters = Counters();
            for (size_t q = 0; q < queryCount; q++) {
                const float *query = &queries[q * dimensions];
                if (dropped) posix_fadvise(nodesFD, 0, 0, POSIX_FADV_DONTNEED);
                auto wall0 = std::chrono::steady_clock::now();
                double cpu0 = threadCPU();
                quantized(query, dimensions, code.data());
                std::vector<uint32_t> ids = graph.search(reinterpret_cast<const char *>(code.data()), ef, wanted,
                    scratch);
                cpu.push_back((threadCPU() - cpu0) * 1e3);
                wall.push_back(
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count());
                double rerank0 = threadCPU();
                hits += rerankedHits(floatsFD, query, dimensions, std::vector<size_t>(ids.begin(), ids.end()), best[q],
                    k);
                rerankCPU += threadCPU() - rerank0;
            }
            double cpuMean = 0;
            for (double c : cpu) cpuMean += c;
            cpuMean /= double(std::max<size_t>(1, cpu.size()));
            Memory mem = memory();
            const Counters &c = scratch.counters;
            std::printf("| %zu%s | %s | %s | %.3f | %.2f / %.2f (%.2f) | %.2f / %.2f | %.0f (%.0f / %.0f) | %.0f | %.3f | "
                        "%.1f | %.1f | %.1f |\n",
                ef, ef == autoBreadth(n) ? " (auto)" : "", cached ? "on" : "off", dropped ? "dropped" : "warm",
                double(hits) / double(queryCount * k),
                percentile(cpu, 0.5), percentile(cpu, 0.99), cpuMean, percentile(wall, 0.5), percentile(wall, 0.99),
                double(c.fileReads()) / queryCount, double(c.upperReads) / queryCount,
                double(c.level0Reads) / queryCount, double(c.cached) / queryCount, rerankCPU / queryCount * 1e3,
                mem.hwmKB / 1024.0, mem.anonKB / 1024.0, mem.fileKB / 1024.0);
            if (pqM > 0)
                std::printf("  (pq: %.0f code distances and %.0f records expanded a search)\n",
                    double(c.codeDistances) / queryCount, double(c.level0Reads) / queryCount);
            if (batching) std::printf("  (level-0 reads batched: %.0f io_uring submissions a search)\n",
                double(c.submissions) / queryCount);
            std::fflush(stdout);
        }
    }
    close(nodesFD);
    close(floatsFD);
    return 0;
}
