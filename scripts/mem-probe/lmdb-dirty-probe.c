// LD_PRELOAD probe for scripts/bench-run-memory.sh: at each LMDB write transaction's commit, its dirty pages
// (single pages, and pages in all), and the most of any commit so far, into $LP_OUT.<pid>. LMDB 0.9 keeps the
// single dirty pages it frees at commit on a free list for the environment's whole life (mdb_page_free,
// me_dpages), so the most single pages of one commit, times 4 KB, is heap that LMDB holds until the store is
// closed. Reads the dirty list at offset 72 of MDB_txn (LMDB 0.9.x on 64-bit; Debian 12 has 0.9.24).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
typedef struct { size_t mid; void *mptr; } ID2;
static FILE *out; static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static size_t maxSingle, maxPages, commits;
static void *wtx[64];
int mdb_txn_begin(void *env, void *parent, unsigned int flags, void **txn) {
    static int (*real)(void *, void *, unsigned int, void **);
    if (!real) real = dlsym(RTLD_NEXT, "mdb_txn_begin");
    int rc = real(env, parent, flags, txn);
    if (rc == 0 && !(flags & 0x20000)) {
        pthread_mutex_lock(&lk);
        for (int i = 0; i < 64; i++) if (!wtx[i]) { wtx[i] = *txn; break; }
        pthread_mutex_unlock(&lk);
    }
    return rc;
}
int mdb_txn_commit(void *txn) {
    static int (*real)(void *);
    if (!real) real = dlsym(RTLD_NEXT, "mdb_txn_commit");
    int w = 0;
    pthread_mutex_lock(&lk);
    for (int i = 0; i < 64; i++) if (wtx[i] == txn) { wtx[i] = 0; w = 1; break; }
    pthread_mutex_unlock(&lk);
    if (w) {
        ID2 *dl = *(ID2 **)((char *)txn + 72);
        size_t n = dl ? dl[0].mid : 0, single = 0, pages = 0;
        for (size_t i = 1; i <= n; i++) {
            unsigned char *p = dl[i].mptr;
            uint16_t flags; uint32_t np;
            memcpy(&flags, p + 10, 2); memcpy(&np, p + 12, 4);
            if ((flags & 0x04) && np > 1) pages += np; else { single++; pages++; }
        }
        pthread_mutex_lock(&lk);
        commits++;
        if (single > maxSingle) maxSingle = single;
        if (pages > maxPages) maxPages = pages;
        if (!out) { const char *p = getenv("LP_OUT"); if (p) { char name[4096]; snprintf(name, sizeof name, "%s.%d", p, (int)getpid()); out = fopen(name, "w"); } }
        if (out) { fprintf(out, "commit=%zu entries=%zu single=%zu pages=%zu maxSingle=%zu maxPages=%zu\n", commits, n, single, pages, maxSingle, maxPages); fflush(out); }
        pthread_mutex_unlock(&lk);
    }
    return real(txn);
}
void mdb_txn_abort(void *txn) {
    static void (*real)(void *);
    if (!real) real = dlsym(RTLD_NEXT, "mdb_txn_abort");
    pthread_mutex_lock(&lk);
    for (int i = 0; i < 64; i++) if (wtx[i] == txn) { wtx[i] = 0; break; }
    pthread_mutex_unlock(&lk);
    real(txn);
}
