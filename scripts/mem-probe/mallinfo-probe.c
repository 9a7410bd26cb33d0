// LD_PRELOAD probe for scripts/bench-run-memory.sh: every 100 ms, glibc's heap figures (mallinfo2: bytes in
// use, free in the arenas, in mmapped blocks) and the process's RSS, one line a sample, into $MI_OUT.<pid>.
// Free arena bytes that malloc_trim has already returned still count as free here but not in RSS. `hwm` is the
// kernel's high-water RSS so far (VmHWM, what /usr/bin/time reports at the end).
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static void *loop(void *arg) {
    const char *path = getenv("MI_OUT");
    if (!path) return NULL;
    char name[4096]; snprintf(name, sizeof name, "%s.%d", path, (int)getpid());
    FILE *f = fopen(name, "w");
    if (!f) return NULL;
    for (;;) {
        struct mallinfo2 m = mallinfo2();
        FILE *s = fopen("/proc/self/statm", "r");
        long size = 0, rss = 0, shared = 0;
        if (s) { fscanf(s, "%ld %ld %ld", &size, &rss, &shared); fclose(s); }
        long hwm = 0;
        FILE *st = fopen("/proc/self/status", "r");
        if (st) {
            char line[256];
            while (fgets(line, sizeof line, st)) if (sscanf(line, "VmHWM: %ld", &hwm) == 1) break;
            fclose(st);
        }
        fprintf(f, "arena=%zu inuse=%zu free=%zu mmap=%zu nmmap=%zu keep=%zu rss=%ld filerss=%ld hwm=%ld\n", m.arena, m.uordblks, m.fordblks, m.hblkhd, m.hblks, m.keepcost, rss * 4096, shared * 4096, hwm * 1024);
        fflush(f);
        usleep(100000);
    }
}
__attribute__((constructor)) static void start(void) {
    if (!getenv("MI_OUT")) return;
    pthread_t t;
    pthread_attr_t a; pthread_attr_init(&a); pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_create(&t, &a, loop, NULL);
}
