// The locks that let the file graph's inserts run side by side (FileGraph.cpp, session 37), as hnswlib's
// `link_list_locks_` do for the graph in memory: an insert holds a node's lock while it reads that node's lists
// (its record, which a `pread` could see half written otherwise) and across the read, prune and write of a
// neighbour's list it links back to. No code holds two node locks at once, so locks may be shared by many nodes
// (striped: a label's lock is `label % stripes`) without a deadlock, and they cost 160 KB for the batch that
// needs them, not a lock a node for the graph's life. Each lock counts the level-0 lists written under it, so an
// insert that read a node's record can tell, under the lock, that its copy of the list is still current: no
// list of the lock's nodes was written since (else it reads the list again). Internal to CHNSW: not part of its
// C interface.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

namespace sluice_chnsw {

/// Striped locks over a graph's nodes, made for one batch of inserts run side by side.
class NodeLocks {
public:
    static constexpr size_t stripes = 4096;

    NodeLocks() : locks(new std::mutex[stripes]), writes(new uint32_t[stripes]()) {}

    std::mutex &of(uint32_t id) const { return locks[id % stripes]; }
    // The level-0 lists written under node `id`'s lock so far (read and counted with that lock held).
    uint32_t writesOf(uint32_t id) const { return writes[id % stripes]; }
    void wrote(uint32_t id) const { writes[id % stripes]++; }

private:
    std::unique_ptr<std::mutex[]> locks;
    std::unique_ptr<uint32_t[]> writes;
};

/// Holds node `id`'s lock for its scope when inserts run side by side (`locks` not null); else does nothing.
class NodeLock {
public:
    NodeLock(const NodeLocks *locks, uint32_t id) : held(locks != nullptr ? &locks->of(id) : nullptr)
    {
        if (held != nullptr) held->lock();
    }
    ~NodeLock()
    {
        if (held != nullptr) held->unlock();
    }
    NodeLock(const NodeLock &) = delete;
    NodeLock &operator=(const NodeLock &) = delete;

private:
    std::mutex *held;
};

}  // namespace sluice_chnsw
