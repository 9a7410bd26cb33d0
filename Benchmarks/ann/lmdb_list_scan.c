// The cost of scanning IVF lists kept in LMDB (issue 33 goal 2): N entries in NLIST lists, keys
// `list id (u32, big-endian) + record id (16 bytes)`, values the graph's 8-bit code (a float scale and 384
// signed bytes); then NPROBE random lists a query, each read by a cursor from its first key and scored in
// place with the graph's VNNI arithmetic. Prints CPU ns per entry on a first pass and a second (resident).
// With CODES > 1, a value packs CODES codes (a list stored as blocks; the key's last bytes number the block).
//   cc -O2 -o lmdb_list_scan lmdb_list_scan.c -llmdb && ./lmdb_list_scan DIR [N] [NLIST] [NPROBE] [CODES]
#include <immintrin.h>
#include <lmdb.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define D 384
#define CHECK(x) do { int rc_ = (x); if (rc_) { fprintf(stderr, "%s: %s\n", #x, mdb_strerror(rc_)); exit(1); } } while (0)

__attribute__((target("avx512f,avx512bw,avx512vnni"))) static int32_t dot(const uint8_t *q, const int8_t *c)
{
    __m512i acc = _mm512_setzero_si512();
    for (int i = 0; i < D; i += 64) {
        acc = _mm512_dpbusd_epi32(acc, _mm512_loadu_si512(q + i), _mm512_loadu_si512(c + i));
    }
    return _mm512_reduce_add_epi32(acc);
}

static double cpu(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static long faults(void)
{
    FILE *f = fopen("/proc/self/stat", "r");
    long minflt = 0;
    char buf[4096];
    if (f && fgets(buf, sizeof buf, f)) {
        char *p = strrchr(buf, ')');
        // fields after the command: state ppid pgrp session tty tpgid flags minflt
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %ld", &minflt);
    }
    if (f) fclose(f);
    return minflt;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp/ivf-lmdb";
    size_t n = argc > 2 ? atol(argv[2]) : 200000, nlist = argc > 3 ? atol(argv[3]) : 894;
    size_t nprobe = argc > 4 ? atol(argv[4]) : 64, queries = 200;
    size_t codes = argc > 5 ? atol(argv[5]) : 1, stride = 4 + D;
    MDB_env *env;
    CHECK(mdb_env_create(&env));
    CHECK(mdb_env_set_mapsize(env, (size_t)8 << 30));
    CHECK(mdb_env_open(env, dir, MDB_NOTLS | MDB_NOSYNC, 0644));
    MDB_txn *txn;
    MDB_dbi dbi;
    CHECK(mdb_txn_begin(env, NULL, 0, &txn));
    CHECK(mdb_dbi_open(txn, NULL, 0, &dbi));
    MDB_stat st;
    CHECK(mdb_stat(txn, dbi, &st));
    if (st.ms_entries == 0) {  // fill in random order, as inserts would arrive, in commits of 1,000
        uint8_t key[20];
        uint8_t *value = malloc(codes * stride);
        srand(1);
        for (size_t i = 0; i < n / codes; i++) {
            uint32_t list = (uint32_t)(rand() % nlist);
            key[0] = list >> 24; key[1] = list >> 16; key[2] = list >> 8; key[3] = list;
            for (int b = 4; b < 20; b++) key[b] = rand();
            for (size_t b = 0; b < codes * stride; b++) value[b] = rand();
            MDB_val k = {20, key}, v = {codes * stride, value};
            CHECK(mdb_put(txn, dbi, &k, &v, 0));
            if (i % 1000 == 999) {
                CHECK(mdb_txn_commit(txn));
                CHECK(mdb_txn_begin(env, NULL, 0, &txn));
            }
        }
    }
    CHECK(mdb_txn_commit(txn));
    CHECK(mdb_txn_begin(env, NULL, MDB_RDONLY, &txn));
    CHECK(mdb_stat(txn, dbi, &st));
    printf("%zu values of %zu codes, %zu lists, %zu leaf and %zu overflow pages, depth %u\n", (size_t)st.ms_entries,
           codes, nlist, (size_t)st.ms_leaf_pages, (size_t)st.ms_overflow_pages, st.ms_depth);
    uint8_t q[D];
    for (int i = 0; i < D; i++) q[i] = rand();
    for (int pass = 0; pass < 2; pass++) {
        srand(7);
        long f0 = faults();
        double t0 = cpu(), worst = 0;
        size_t entries = 0;
        volatile int64_t sink = 0;
        for (size_t qi = 0; qi < queries; qi++) {
            double tq = cpu();
            MDB_cursor *cur;
            CHECK(mdb_cursor_open(txn, dbi, &cur));
            for (size_t p = 0; p < nprobe; p++) {
                uint32_t list = (uint32_t)(rand() % nlist);
                uint8_t prefix[4] = {list >> 24, list >> 16, list >> 8, list};
                MDB_val k = {4, prefix}, v;
                int rc = mdb_cursor_get(cur, &k, &v, MDB_SET_RANGE);
                while (rc == 0 && memcmp(k.mv_data, prefix, 4) == 0) {
                    for (size_t c = 0; c < v.mv_size / stride; c++) {
                        const uint8_t *code = (const uint8_t *)v.mv_data + c * stride;
                        float scale;
                        memcpy(&scale, code, 4);
                        sink += (int64_t)(scale * dot(q, (const int8_t *)code + 4));
                        entries++;
                    }
                    rc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
                }
            }
            mdb_cursor_close(cur);
            double dq = cpu() - tq;
            if (dq > worst) worst = dq;
        }
        double t = cpu() - t0;
        printf("%s: %zu codes a query, %.1f ns a code, %.0f us a query (worst %.0f), %.1f minor faults a query\n",
               pass == 0 ? "first pass" : "resident", entries / queries,
               t / entries * 1e9, t / queries * 1e6, worst * 1e6, (double)(faults() - f0) / queries);
    }
    mdb_txn_abort(txn);
    mdb_env_close(env);
    return 0;
}
