// The local store's HNSW graph with hnswlib's level-0 block (each element's bottom-layer links, 8-bit vector
// and label) in a file-backed MAP_SHARED mapping instead of the heap (issue 33 goal 2, the disk graph's
// groundwork): the same space, kernels and quantizer as the store's graph (this file includes
// Sources/CHNSW/HNSWIndex.cpp), the same clustered 384-d vectors as `sluice-bench local-search` (the
// generator of `ClusteredVectors`, the same seed), the same settings (M 16, ef_construction 100,
// `ef_search: auto`, k + max(k, 8) candidates re-ranked by the float vectors).
//
// It measures, at one size: insert CPU a vector; then for each release policy a pass of one-at-a-time
// searches with its latency (p50/p99 of the graph search, wall and thread CPU), minor faults a search and
// recall@10 against an exact float scan; and the process's memory (VmHWM, RssAnon, RssFile from
// /proc/self/status, the peak reset before each phase through /proc/self/clear_refs) with the mapping
//   none      left resident,
//   every:N   dropped by madvise(MADV_DONTNEED) after every N searches (inserts while building),
//   budget:MB dropped whenever the process's file-backed resident memory grew by MB since the last drop
//             (checked after every search or insert, one pread of /proc/self/statm: what
//             ResidentMemoryReleaser does for LMDB's maps with a 4 MB budget).
// It also counts what stays anonymous per element (hnswlib's per-element mutex, level, upper-layer link
// lists and their pointers, the label hash map, the visited lists) and what a graph of our own would keep.
//
//   clang++ -std=c++17 -O2 -ffp-contract=off -pthread -I Sources/CHNSW/include \
//       -o /tmp/hnsw_mapped Benchmarks/ann/hnsw_mapped.cpp
//   /tmp/hnsw_mapped --vectors 100000 --dir DIR [--anonymous] [--build-release none|every:N|budget:MB]
//       [--release-from N] [--search-release none,every:1,budget:4] [--queries 200] [--threads 2]
//       [--ef auto|N] [--advise random|nohuge|both|none] [--count-distances]
// --release-from N applies the build's policy from the Nth insert on only (at a million, releasing from the
// first insert would take hours of faults); --advise is the madvise advice given the mapping (MADV_RANDOM by
// default; none of them changes the kernel's fault-around). The first search pass also reports the
// bottom-layer nodes a search reads and the 4 KB pages and 64 KB windows they lie in. HNSW_MAPPED_TRACE=1
// prints the memory after the first searches of each pass.
// DIR receives the graph's file (level0.bin) and the float vectors (floats.bin, read back with pread for the
// re-ranking and the exact scan, so they are never mapped and count in no RSS). The clang++ of the Swift
// toolchain builds it (HNSWIndex.cpp uses a clang pragma).
#include "../../Sources/CHNSW/HNSWIndex.cpp"
#include "ann_bench.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cinttypes>

namespace bench {

// --count-distances: hnswlib's distance function wrapped to count its calls, a count a thread (summed when
// the thread's inserts end). The wrapper costs an indirect call a distance: count in a run of its own.
hnswlib::DISTFUNC<float> countedKernel = nullptr;
thread_local size_t distanceCalls = 0;
float countedDistance(const void *a, const void *b, const void *parameters)
{
    distanceCalls++;
    return countedKernel(a, b, parameters);
}

// A release policy: none, every N operations, or past a budget of file-backed resident bytes.
struct Policy {
    enum Kind { none, every, budget } kind = none;
    long value = 0;
    std::string name = "none";

    static Policy parse(const std::string &text)
    {
        Policy p;
        p.name = text;
        if (text.rfind("every:", 0) == 0) {
            p.kind = every;
            p.value = std::atol(text.c_str() + 6);
        } else if (text.rfind("budget:", 0) == 0) {
            p.kind = budget;
            p.value = std::atol(text.c_str() + 7) << 20;
        } else if (text != "none") {
            std::fprintf(stderr, "unknown policy %s\n", text.c_str());
            std::exit(2);
        }
        return p;
    }
};

// The level-0 block's mapping and the policy that drops it, shared by the threads that insert or search.
struct Releaser {
    char *base = nullptr;
    size_t length = 0;
    Policy policy;
    int statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    long pageSize = sysconf(_SC_PAGESIZE);
    std::atomic<long> operations{0};
    // The process's file-backed resident pages outside the graph's mapping (its libraries), measured once with
    // the mapping dropped: the budget is on the mapping's resident pages. (Measuring the floor again after each
    // release, as ResidentMemoryReleaser does, let a second thread's faults between the madvise and the
    // measurement raise it: at 30,000 vectors the floor reached the whole mapping and releases stopped.)
    std::atomic<long> floorPages{-1};
    std::atomic<long> releases{0};
    std::atomic<long> mostPages{0};  // the most file-backed resident pages a budget check saw
    std::mutex lock;

    long sharedPages()
    {
        char buffer[128];
        ssize_t count = pread(statm, buffer, sizeof buffer - 1, 0);
        if (count <= 0) return -1;
        buffer[count] = 0;
        long size, resident, shared;
        if (std::sscanf(buffer, "%ld %ld %ld", &size, &resident, &shared) != 3) return -1;
        return shared;
    }

    void release()
    {
        if (base == nullptr) return;
        madvise(base, length, MADV_DONTNEED);
        releases++;
    }

    // After one operation (a search or an insert).
    void after()
    {
        switch (policy.kind) {
        case Policy::none:
            return;
        case Policy::every:
            if (++operations % policy.value == 0) {
                std::lock_guard<std::mutex> hold(lock);
                release();
            }
            return;
        case Policy::budget: {
            long floor = floorPages.load();
            long pages = sharedPages();
            if (pages > mostPages.load()) mostPages = pages;
            if ((pages - floor) * pageSize <= policy.value) return;
            std::lock_guard<std::mutex> hold(lock);
            if ((sharedPages() - floor) * pageSize > policy.value) release();
            return;
        }
        }
    }
};


}  // namespace bench

using namespace bench;

int main(int argc, char **argv)
{
    size_t n = 100000, queryCount = 200, threads = 2, m = 16, efConstruction = 100, dimensions = 384, k = 10;
    std::string dir = "/tmp/hnsw-mapped", ef = "auto", searchPolicies = "none,every:1,every:16,budget:4";
    std::string buildPolicy = "none";
    size_t releaseFrom = 0;  // the build's policy applies from this insert on (earlier ones: none)
    bool layouts = false;    // also count the windows a search would map with the nodes in cluster order
    bool anonymous = false;
    bool countDistances = false;
    std::string advice = "random";
    const bool trace = std::getenv("HNSW_MAPPED_TRACE") != nullptr;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&]() { return optionValue(argc, argv, i); };
        if (a == "--vectors") n = std::stoul(value());
        else if (a == "--queries") queryCount = std::stoul(value());
        else if (a == "--threads") threads = std::stoul(value());
        else if (a == "--dir") dir = value();
        else if (a == "--ef") ef = value();
        else if (a == "--search-release") searchPolicies = value();
        else if (a == "--build-release") buildPolicy = value();
        else if (a == "--anonymous") anonymous = true;
        else if (a == "--advise") advice = value();
        else if (a == "--release-from") releaseFrom = std::stoul(value());
        else if (a == "--layouts") layouts = true;
        else if (a == "--count-distances") countDistances = true;
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    size_t breadth = ef == "auto" ? autoBreadth(n) : std::stoul(ef);
    size_t wanted = k + std::max<size_t>(k, 8);  // LocalANNIndex.candidates(for:)
    mkdir(dir.c_str(), 0755);
    std::printf("%zu vectors x %zu d in %zu clusters (spread 1.0), M %zu, ef_construction %zu, ef_search %zu%s, "
                "%zu candidates re-ranked, %zu queries, %zu insert threads, level-0 block %s (advice %s), kernel %d\n",
        n, dimensions, std::max<size_t>(10, n / 100), m, efConstruction, breadth, ef == "auto" ? " (auto)" : "",
        wanted, queryCount, threads, anonymous ? "on the heap (hnswlib's malloc)" : "in a MAP_SHARED file",
        anonymous ? "-" : advice.c_str(), chosenKernel());
    printMemory("start");

    QuantizedInnerProductSpace space(dimensions);
    auto graph = std::make_unique<hnswlib::HierarchicalNSW<float>>(&space, n, m, efConstruction);
    graph->setEf(1);
    if (countDistances) {
        countedKernel = graph->fstdistfunc_;
        graph->fstdistfunc_ = countedDistance;
    }
    std::atomic<size_t> insertDistances{0};
    const size_t elementBytes = graph->size_data_per_element_;
    const size_t blockBytes = n * elementBytes;

    Releaser releaser;
    int mapFD = -1;
    if (!anonymous) {
        std::string path = dir + "/level0.bin";
        mapFD = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (mapFD < 0 || ftruncate(mapFD, off_t(blockBytes)) != 0) {
            std::perror(path.c_str());
            return 1;
        }
        void *mapped = mmap(nullptr, blockBytes, PROT_READ | PROT_WRITE, MAP_SHARED, mapFD, 0);
        if (mapped == MAP_FAILED) {
            std::perror("mmap");
            return 1;
        }
        // MADV_RANDOM: no read-ahead on a fault, so the page cache holds the file in single pages (not in large
        // folios a fault would map whole); MADV_NOHUGEPAGE: never a 2 MB page for the mapping.
        if ((advice == "random" || advice == "both") && madvise(mapped, blockBytes, MADV_RANDOM) != 0)
            std::perror("madvise(MADV_RANDOM)");
        if ((advice == "nohuge" || advice == "both") && madvise(mapped, blockBytes, MADV_NOHUGEPAGE) != 0)
            std::perror("madvise(MADV_NOHUGEPAGE)");
        std::free(graph->data_level0_memory_);
        graph->data_level0_memory_ = static_cast<char *>(mapped);
        releaser.base = static_cast<char *>(mapped);
        releaser.length = blockBytes;
    }
    releaser.release();
    releaser.floorPages = releaser.sharedPages();

    // Build: generate a batch (floats written to floats.bin for the re-ranking and the truth), insert it with
    // `threads` threads as sluice_hnsw_add does.
    std::string floatsPath = dir + "/floats.bin";
    int floatsFD = open(floatsPath.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    Clustered generator(dimensions, std::max<size_t>(10, n / 100), 1.0f, 0x10CA15EA);
    const size_t batch = 4096;
    std::vector<uint32_t> clusterOf;  // each vector's cluster (with --layouts only: 4 bytes a vector)
    std::vector<float> vectors(batch * dimensions);
    double insertCPU = 0, insertWall = 0, tailCPU = 0;
    long insertFaults = 0, tailFaults = 0;
    size_t tailCount = 0;
    resetPeak();
    printMemory("before the build");
    for (size_t first = 0; first < n; first += batch) {
        size_t count = std::min(batch, n - first);
        const bool releasing = first >= releaseFrom;
        releaser.policy = Policy::parse(releasing ? buildPolicy : "none");
        for (size_t i = 0; i < count; i++) {
            size_t cluster = generator.next(&vectors[i * dimensions]);
            if (layouts) clusterOf.push_back(uint32_t(cluster));
        }
        if (pwrite(floatsFD, vectors.data(), count * dimensions * sizeof(float),
                off_t(first * dimensions * sizeof(float))) < 0) {
            std::perror("pwrite");
            return 1;
        }
        double cpu0 = processCPU();
        long faults0 = minorFaults(RUSAGE_SELF);
        auto wall0 = std::chrono::steady_clock::now();
        std::atomic<size_t> next{0};
        auto work = [&]() {
            std::vector<uint8_t> row(scaleBytes + dimensions);
            const size_t calls0 = distanceCalls;
            for (size_t i = next++; i < count; i = next++) {
                quantized(&vectors[i * dimensions], dimensions, row.data());
                graph->addPoint(row.data(), first + i);
                releaser.after();
            }
            insertDistances += distanceCalls - calls0;
        };
        size_t workers = std::max<size_t>(1, std::min(threads, count / 64 + 1));
        std::vector<std::thread> pool;
        for (size_t t = 1; t < workers; t++) pool.emplace_back(work);
        work();
        for (auto &thread : pool) thread.join();
        insertWall += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        insertCPU += processCPU() - cpu0;
        insertFaults += minorFaults(RUSAGE_SELF) - faults0;
        if (releasing) {
            tailCPU += processCPU() - cpu0;
            tailFaults += minorFaults(RUSAGE_SELF) - faults0;
            tailCount += count;
        }
        if ((first / batch) % 32 == 31) {
            std::printf("  ... %zu inserted, %.1f CPU-s\n", first + count, insertCPU);
            std::fflush(stdout);
        }
    }
    std::printf("build: %.1f us CPU a vector (%.1f CPU-s, %.1f s wall, %.1f minor faults a vector, %ld releases, "
                "policy %s, most file-backed resident seen by a budget check %.1f MB)\n",
        insertCPU / n * 1e6, insertCPU, insertWall, double(insertFaults) / n, releaser.releases.load(),
        buildPolicy.c_str(), releaser.mostPages.load() * releaser.pageSize / 1048576.0);
    if (countDistances) std::printf("  %.0f distances an insert (counted)\n", double(insertDistances.load()) / n);
    if (releaseFrom > 0 && tailCount > 0) {
        std::printf("build from %zu on, with the policy: %.1f us CPU a vector, %.1f minor faults a vector (%zu vectors)\n",
            releaseFrom, tailCPU / tailCount * 1e6, double(tailFaults) / tailCount, tailCount);
    }
    printMemory("after the build");

    // What stays anonymous, per element, and what a graph of our own would keep.
    size_t upperLists = 0, upperBytes = 0;
    for (size_t i = 0; i < graph->cur_element_count; i++) {
        if (graph->element_levels_[i] > 0) {
            upperLists++;
            // malloc's 8-byte header, rounded to 16
            upperBytes += (graph->size_links_per_element_ * graph->element_levels_[i] + 8 + 15) / 16 * 16;
        }
    }
    const double perN = 1.0 / double(n);
    double mutexes = double(n * sizeof(std::mutex)) * perN;
    double levels = double(n * sizeof(int)) * perN;
    double pointers = double(n * sizeof(void *)) * perN;
    double upper = double(upperBytes) * perN;
    // libstdc++'s node: next pointer + pair<uint64, uint32> (24 bytes, 32 with malloc's header), plus buckets
    double labelMap = double(graph->label_lookup_.size() * 32 + graph->label_lookup_.bucket_count() * 8) * perN;
    double visited = double(n * sizeof(unsigned short)) * perN;  // one list; one more per concurrent search
    double fixedLocks = double(hnswlib::HierarchicalNSW<float>::max_update_element_locks * sizeof(std::mutex));
    std::printf("anonymous per element (hnswlib 0.6.2): mutex %.0f, level %.0f, upper-list pointer %.0f, upper "
                "lists %.1f (%zu elements above level 0), label map %.1f, visited list %.0f a searching thread: "
                "%.1f bytes; plus %.1f MB of update locks fixed\n",
        mutexes, levels, pointers, upper, upperLists, labelMap, visited,
        mutexes + levels + pointers + upper + labelMap + visited, fixedLocks / 1048576);
    // Ours: labels dense 0..<n (the label is the internal id: no map; a vector of 4-byte ids if not), 4,096
    // striped mutexes, a 1-byte level, upper lists in a table indexed by a 4-byte slot only for the elements
    // above level 0, visited marks as a 1-bit-per-element set per searching thread.
    double ours = 1 + double(upperLists * 4 + upperBytes) * perN + 0.125;
    std::printf("anonymous per element with dense labels, 4,096 striped locks, 1-byte levels, upper lists only "
                "where they exist, a visited bitset: %.1f bytes (+ label vector 4 if labels are not dense; "
                "+ %.2f MB fixed)\n",
        ours, 4096.0 * sizeof(std::mutex) / 1048576);
    std::printf("level-0 block: %zu bytes an element (links %zu, vector %zu, label %zu): %.1f MB\n", elementBytes,
        graph->size_links_level0_, graph->data_size_, sizeof(hnswlib::labeltype), blockBytes / 1048576.0);

    // Queries: the vectors that follow the base (as local-search), truth by an exact float scan of floats.bin.
    std::vector<float> queries(queryCount * dimensions);
    for (size_t q = 0; q < queryCount; q++) (void)generator.next(&queries[q * dimensions]);
    const auto best = exactBest(floatsFD, n, dimensions, queries, k);  // ascending, at most k

    // A breadth-first order of the bottom layer from the entry point (nodes no path reaches after it, in id
    // order): where each node would lie if the block were rewritten in that order, to count the windows a
    // search would map if linked nodes shared pages.
    std::vector<uint32_t> position(layouts ? graph->cur_element_count : 0, UINT32_MAX);
    std::vector<uint32_t> clusterPosition;
    if (layouts) {
        std::vector<uint32_t> order;
        order.reserve(graph->cur_element_count);
        auto visit = [&](uint32_t start) {
            if (position[start] != UINT32_MAX) return;
            position[start] = uint32_t(order.size());
            order.push_back(start);
            for (size_t head = order.size() - 1; head < order.size(); head++) {
                unsigned int *links = graph->get_linklist0(order[head]);
                const unsigned short count = graph->getListCount(links);
                for (unsigned short j = 1; j <= count; j++) {
                    if (position[links[j]] != UINT32_MAX) continue;
                    position[links[j]] = uint32_t(order.size());
                    order.push_back(links[j]);
                }
            }
        };
        visit(uint32_t(graph->enterpoint_node_));
        for (size_t i = 0; i < graph->cur_element_count; i++) visit(uint32_t(i));
        // The generator's own clusters, one after the other (ids in order within one): the best order a
        // clustering of the vectors (k-means, as the IVF lists) could give.
        std::vector<uint32_t> byCluster(graph->cur_element_count);
        for (size_t i = 0; i < byCluster.size(); i++) byCluster[i] = uint32_t(i);
        std::stable_sort(byCluster.begin(), byCluster.end(),
            [&](uint32_t a, uint32_t b) { return clusterOf[a] < clusterOf[b]; });
        clusterPosition.resize(byCluster.size());
        for (size_t i = 0; i < byCluster.size(); i++) clusterPosition[byCluster[i]] = uint32_t(i);
    }

    // Searches, one policy after the other, one query at a time.
    std::vector<std::string> policies;
    for (size_t start = 0; start <= searchPolicies.size();) {
        size_t comma = searchPolicies.find(',', start);
        if (comma == std::string::npos) comma = searchPolicies.size();
        policies.push_back(searchPolicies.substr(start, comma - start));
        start = comma + 1;
    }
    std::printf("| release while searching | recall@10 | p50 / p99 ms (wall) | CPU ms a search, mean / p99 | minor "
                "faults a search | releases | VmHWM MB | RssAnon MB | RssFile MB, most after a search / end |\n"
                "|---|---|---|---|---|---|---|---|---|\n");
    std::vector<uint8_t> row(scaleBytes + dimensions);
    for (const auto &name : policies) {
        releaser.policy = Policy::parse(name);
        releaser.operations = 0;
        releaser.releases = 0;
        if (releaser.policy.kind != Policy::none) releaser.release();  // a releasing pass starts dropped
        resetPeak();
        if (trace) printMemory(("pass " + name).c_str());
        std::vector<double> wall, cpu;
        size_t nodesRead = 0, pagesRead = 0, windowsRead = 0, orderedWindowsRead = 0, clusteredWindowsRead = 0;
        std::vector<uint32_t> readNodes;
        std::vector<char> nodeBuffer(elementBytes);
        double preadCPU = 0;
        long mostShared = 0;  // the most file-backed resident pages seen right after a search (before a release)
        long faults0 = minorFaults(RUSAGE_THREAD);
        size_t hits = 0;
        for (size_t q = 0; q < queryCount; q++) {
            const float *query = &queries[q * dimensions];
            auto wall0 = std::chrono::steady_clock::now();
            double cpu0 = threadCPU();
            quantized(query, dimensions, row.data());
            auto found = graph->searchKnn(row.data(), std::max(breadth, wanted));
            while (found.size() > wanted) found.pop();
            cpu.push_back((threadCPU() - cpu0) * 1e3);
            wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall0).count());
            mostShared = std::max(mostShared, releaser.sharedPages());
            if (&name == &policies.front()) {
                // The bottom-layer nodes this search read (hnswlib's visited list: the one just released is the
                // next handed out, and handing it out moves its mark on by one), and the 4 KB pages and 64 KB
                // windows (the kernel's fault-around) they lie in.
                auto *visited = graph->visited_list_pool_->getFreeVisitedList();
                const auto mark = hnswlib::vl_type(visited->curV - 1);
                std::vector<uint32_t> pages, ordered, clustered;
                for (size_t i = 0; i < graph->cur_element_count; i++) {
                    if (visited->mass[i] != mark) continue;
                    nodesRead++;
                    if (mapFD >= 0) readNodes.push_back(uint32_t(i));
                    pages.push_back(uint32_t(i * elementBytes / 4096));
                    pages.push_back(uint32_t((i * elementBytes + elementBytes - 1) / 4096));
                    if (layouts) {
                        size_t at = position[i];
                        ordered.push_back(uint32_t(at * elementBytes / 65536));
                        ordered.push_back(uint32_t((at * elementBytes + elementBytes - 1) / 65536));
                        at = clusterPosition[i];
                        clustered.push_back(uint32_t(at * elementBytes / 65536));
                        clustered.push_back(uint32_t((at * elementBytes + elementBytes - 1) / 65536));
                    }
                }
                graph->visited_list_pool_->releaseVisitedList(visited);
                // The same nodes read with pread from the page cache instead of through the mapping (in the
                // order of their ids; a search would read them in its own order): the thread's CPU.
                if (!readNodes.empty()) {
                    double cpu0 = threadCPU();
                    for (uint32_t node : readNodes) {
                        if (pread(mapFD, nodeBuffer.data(), elementBytes, off_t(size_t(node) * elementBytes)) < 0) {
                            std::perror("pread");
                            return 1;
                        }
                    }
                    preadCPU += threadCPU() - cpu0;
                    readNodes.clear();
                }
                std::sort(ordered.begin(), ordered.end());
                orderedWindowsRead += size_t(std::unique(ordered.begin(), ordered.end()) - ordered.begin());
                std::sort(clustered.begin(), clustered.end());
                clusteredWindowsRead += size_t(std::unique(clustered.begin(), clustered.end()) - clustered.begin());
                std::sort(pages.begin(), pages.end());
                pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
                pagesRead += pages.size();
                for (auto &page : pages) page /= 16;
                pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
                windowsRead += pages.size();
            }
            releaser.after();
            if (trace && q < 3) printMemory(("after search " + std::to_string(q)).c_str());
            // Re-rank by the float vectors (read with pread, as the store reads them from LMDB; not timed).
            std::vector<size_t> labels;
            for (; !found.empty(); found.pop()) labels.push_back(found.top().second);
            hits += rerankedHits(floatsFD, query, dimensions, labels, best[q], k);
        }
        long faults = minorFaults(RUSAGE_THREAD) - faults0;
        double cpuMean = 0;
        for (double c : cpu) cpuMean += c;
        cpuMean /= std::max<size_t>(1, cpu.size());
        Memory mem = memory();
        std::printf("| %s | %.3f | %.2f / %.2f | %.2f / %.2f | %.0f | %ld | %.1f | %.1f | %.1f / %.1f |\n", name.c_str(),
            double(hits) / double(queryCount * k), percentile(wall, 0.5), percentile(wall, 0.99), cpuMean,
            percentile(cpu, 0.99), double(faults) / queryCount, releaser.releases.load(), mem.hwmKB / 1024.0,
            mem.anonKB / 1024.0, mostShared * releaser.pageSize / 1048576.0, mem.fileKB / 1024.0);
        if (nodesRead > 0) {
            std::printf("  a search read %.0f bottom-layer nodes, in %.0f distinct 4 KB pages (%.1f MB) and %.0f 64 KB "
                        "windows (%.1f MB)\n",
                double(nodesRead) / queryCount, double(pagesRead) / queryCount,
                double(pagesRead) / queryCount * 4096 / 1048576, double(windowsRead) / queryCount,
                double(windowsRead) / queryCount * 65536 / 1048576);
            if (preadCPU > 0) {
                std::printf("  reading those nodes with pread (528 bytes each, from the page cache): %.3f ms of CPU a "
                            "search, %.2f us a node\n",
                    preadCPU / queryCount * 1e3, preadCPU / double(nodesRead) * 1e6);
            }
            if (layouts) {
                std::printf("  they would lie in %.0f 64 KB windows (%.1f MB) in a breadth-first order of the bottom "
                            "layer, in %.0f (%.1f MB) in the order of their clusters\n",
                    double(orderedWindowsRead) / queryCount, double(orderedWindowsRead) / queryCount * 65536 / 1048576,
                    double(clusteredWindowsRead) / queryCount,
                    double(clusteredWindowsRead) / queryCount * 65536 / 1048576);
            }
        }
        std::fflush(stdout);
    }

    if (!anonymous) {
        // save = msync of the mapping (the store would then rename the file into place)
        double cpu0 = processCPU();
        auto wall0 = std::chrono::steady_clock::now();
        msync(releaser.base, blockBytes, MS_SYNC);
        std::printf("msync of the level-0 block: %.2f s wall, %.2f CPU-s\n",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count(), processCPU() - cpu0);
        munmap(releaser.base, blockBytes);
        graph->data_level0_memory_ = nullptr;  // hnswlib frees it
        close(mapFD);
    }
    close(floatsFD);
    return 0;
}
