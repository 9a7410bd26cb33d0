// LD_PRELOAD probe: every allocation of BA_MIN bytes or more (default 1 MB) through malloc, calloc, realloc,
// posix_memalign or aligned_alloc, with its backtrace (backtrace_symbols_fd: offsets into the binary, for
// `addr2line -f -C -i -e BINARY 0x…`), the time and the process's RSS, and the free of each, written to
// $BA_OUT.<pid> (default /tmp/bigalloc-log.<pid>). Replaying the log gives the big blocks alive at any moment,
// e.g. at the highest RSS it saw. Session 41 found the file graph's codes held twice at a growth this way
// (docs/LOCAL_INDEX.md, "The codes grown in place"). Frees are matched only for pointers at glibc's offset of
// a block mapped on its own (0x10 into a page), which blocks this large are with `sluice`'s fixed threshold.
//   cc -O2 -shared -fPIC -o bigalloc-probe.so scripts/mem-probe/bigalloc-probe.c -ldl -lpthread
//   OMP_THREAD_LIMIT=1 BA_OUT=/tmp/ba/log LD_PRELOAD=$PWD/bigalloc-probe.so .build-rel/release/sluice run …
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_calloc(size_t, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
static __thread int busy;
static int fd = -1;
static size_t minBytes = 1 << 20;
#define MAXT 4096
static void *tracked[MAXT];
static size_t trackedSize[MAXT];
static int hwm;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec / 1e9; }
static long rssKB(void) {
    int f = open("/proc/self/statm", O_RDONLY);
    char b[128];
    int n = read(f, b, sizeof b - 1);
    close(f);
    if (n <= 0) return 0;
    b[n] = 0;
    long a, r;
    sscanf(b, "%ld %ld", &a, &r);
    return r * 4;
}
static void init(void) {
    if (fd >= 0) return;
    const char *m = getenv("BA_MIN"); if (m) minBytes = strtoul(m, 0, 10);
    char path[256]; snprintf(path, sizeof path, "%s.%d", getenv("BA_OUT") ? getenv("BA_OUT") : "/tmp/bigalloc-log", getpid());
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
}
static void logAlloc(const char *what, void *p, size_t n, void *old) {
    if (busy || !p) return;
    busy = 1;
    pthread_mutex_lock(&lock); init();
    for (int i = 0; i < MAXT; i++) if (!tracked[i]) { tracked[i] = p; trackedSize[i] = n; if (i >= hwm) hwm = i + 1; break; }
    char b[256]; int l = snprintf(b, sizeof b, "A %.3f %s %p %zu old=%p rss=%ld\n", now(), what, p, n, old, rssKB());
    write(fd, b, l);
    void *frames[24]; int k = backtrace(frames, 24); backtrace_symbols_fd(frames, k, fd); write(fd, "--\n", 3);
    pthread_mutex_unlock(&lock); busy = 0;
}
static void untrack(void *p) {
    if (!p || busy || ((unsigned long)p & 0xfff) != 0x10) return;
    busy = 1; pthread_mutex_lock(&lock);
    for (int i = 0; i < hwm; i++) if (tracked[i] == p) {
        init(); char b[128]; int l = snprintf(b, sizeof b, "F %.3f %p %zu rss=%ld\n", now(), p, trackedSize[i], rssKB()); write(fd, b, l);
        tracked[i] = 0; break; }
    pthread_mutex_unlock(&lock); busy = 0;
}
void *malloc(size_t n) { void *p = __libc_malloc(n); if (n >= minBytes) logAlloc("malloc", p, n, 0); return p; }
void *calloc(size_t a, size_t b) { void *p = __libc_calloc(a, b); if (a * b >= minBytes) logAlloc("calloc", p, a * b, 0); return p; }
void *realloc(void *o, size_t n) { untrack(o); void *p = __libc_realloc(o, n); if (n >= minBytes) logAlloc("realloc", p, n, o); return p; }
void free(void *p) { untrack(p); __libc_free(p); }
int posix_memalign(void **r, size_t a, size_t n) { *r = __libc_memalign(a, n); if (!*r) return 12; if (n >= minBytes) logAlloc("memalign", *r, n, 0); return 0; }
void *aligned_alloc(size_t a, size_t n) { void *p = __libc_memalign(a, n); if (n >= minBytes) logAlloc("aligned", p, n, 0); return p; }
