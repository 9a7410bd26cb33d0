// LD_PRELOAD probe for scripts/bench-run-memory.sh: the split of the peak RSS at the moments the kernel records
// it. Linux updates a process's high-water RSS (what /usr/bin/time reports) when pages are unmapped — every
// `madvise(MADV_DONTNEED)` and `munmap` — and at exit, so the peak is the RSS just before one of those. This
// probe wraps `madvise` and `malloc_trim` (the memory releaser's calls, made through the PLT) and, just before
// each, reads /proc/self/statm; whenever the RSS is a new maximum (by 128 KB or more since the last recorded
// one) it also reads glibc's mallinfo2 and /proc/self/smaps, and writes one line into $PP_OUT.<pid>: the RSS,
// the anonymous part (glibc's heap in use, free, mmapped blocks), the file-backed part split into LMDB's maps
// (data.mdb under a path containing /store or /state), the executable, shared libraries and the rest, and how many
// arenas glibc's heap has (`malloc_info`).
// glibc's own munmap calls (freeing mmapped blocks) are internal and not seen: a peak reached there shows as
// VmHWM above the highest line (the 100 ms sampler, mallinfo-probe.c, reads VmHWM too).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static pthread_mutex_t lk = PTHREAD_MUTEX_INITIALIZER;
static long maxRecorded;
static FILE *out;
static int reentered;

static void statm(long *rss, long *shared) {
    *rss = 0; *shared = 0;
    int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buffer[128]; ssize_t n = read(fd, buffer, sizeof buffer - 1); close(fd);
    if (n <= 0) return;
    buffer[n] = 0;
    long size; sscanf(buffer, "%ld %ld %ld", &size, rss, shared);
    *rss *= 4096; *shared *= 4096;
}

static void record(const char *event) {
    long rss, shared;
    statm(&rss, &shared);
    pthread_mutex_lock(&lk);
    if (reentered || rss < maxRecorded + (128 << 10)) { pthread_mutex_unlock(&lk); return; }
    reentered = 1;
    maxRecorded = rss;
    struct mallinfo2 m = mallinfo2();
    // glibc's arenas in use (the main heap and one per thread arena): malloc_info writes a <heap nr=…> for each.
    long arenas = 0;
    char *xml = NULL; size_t xmlSize = 0;
    FILE *memory = open_memstream(&xml, &xmlSize);
    if (memory) {
        malloc_info(0, memory);
        fclose(memory);
        for (char *at = xml; at && (at = strstr(at, "<heap nr=")); at++) arenas++;
        free(xml);
    }
    // Rss by kind of mapping, in kB.
    long store = 0, state = 0, exe = 0, libs = 0, otherFile = 0, heap = 0, anon = 0, stacks = 0;
    FILE *s = fopen("/proc/self/smaps", "r");
    char exePath[4096] = {0};
    ssize_t el = readlink("/proc/self/exe", exePath, sizeof exePath - 1);
    if (el > 0) exePath[el] = 0;
    if (s) {
        char line[4096]; int kind = 0;
        while (fgets(line, sizeof line, s)) {
            unsigned long a, b;
            if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, ' ')) {
                char *path = strchr(line, '/');
                char *bracket = strchr(line, '[');
                if (path) {
                    path[strcspn(path, "\n")] = 0;
                    if (strstr(path, "data.mdb") && strstr(path, "/store")) kind = 1;
                    else if (strstr(path, "data.mdb") && strstr(path, "/state")) kind = 2;
                    else if (strcmp(path, exePath) == 0) kind = 3;
                    else if (strstr(path, ".so")) kind = 4;
                    else kind = 5;
                } else if (bracket && strncmp(bracket, "[heap]", 6) == 0) kind = 6;
                else if (bracket && strncmp(bracket, "[stack", 6) == 0) kind = 8;
                else kind = 7;
                continue;
            }
            long kb;
            if (strncmp(line, "Rss:", 4) == 0 && sscanf(line + 4, "%ld", &kb) == 1) {
                switch (kind) {
                case 1: store += kb; break; case 2: state += kb; break; case 3: exe += kb; break;
                case 4: libs += kb; break; case 5: otherFile += kb; break; case 6: heap += kb; break;
                case 8: stacks += kb; break; default: anon += kb; break;
                }
            }
        }
        fclose(s);
    }
    if (!out) {
        const char *p = getenv("PP_OUT");
        if (p) { char name[4096]; snprintf(name, sizeof name, "%s.%d", p, (int)getpid()); out = fopen(name, "w"); }
    }
    if (out) {
        fprintf(out, "event=%s rss=%ld filerss=%ld inuse=%zu free=%zu mmap=%zu store=%ld state=%ld exe=%ld libs=%ld otherfile=%ld brk=%ld anonmaps=%ld stacks=%ld arenas=%ld\n",
                event, rss, shared, m.uordblks, m.fordblks, m.hblkhd, store << 10, state << 10, exe << 10,
                libs << 10, otherFile << 10, heap << 10, anon << 10, stacks << 10, arenas);
        fflush(out);
    }
    reentered = 0;
    pthread_mutex_unlock(&lk);
}

int madvise(void *addr, size_t length, int advice) {
    static int (*real)(void *, size_t, int);
    if (!real) real = dlsym(RTLD_NEXT, "madvise");
    if (advice == MADV_DONTNEED && getenv("PP_OUT")) record("release");
    return real(addr, length, advice);
}

int malloc_trim(size_t pad) {
    static int (*real)(size_t);
    if (!real) real = dlsym(RTLD_NEXT, "malloc_trim");
    if (getenv("PP_OUT")) record("trim");
    return real(pad);
}
