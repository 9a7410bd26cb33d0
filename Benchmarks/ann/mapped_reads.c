// Reading scattered large values of an LMDB data file (issue 33, the memory releaser's tax on searches): PAGES
// random pages of FILE (an IVF query at a million vectors reads 14,500 blocks of 3,880 bytes, each on its own
// page), read four ways, each REPEATS times; prints the process's CPU (user + system) for each, and the
// file-backed resident pages the mapped reads left:
//   pread      copied with pread into one buffer (LMDBValueFile, `forEach(largeValues: .copied)`);
//   budget     read through a read-only shared map, releasing the whole map (MADV_DONTNEED) when the
//              file-backed resident pages grew by 4 MB, checked every 64 values (the releaser's budget);
//   cold       through the map, nothing mapped before and no release (fault-around maps 16 pages a fault);
//   warm       the same again, every page still mapped.
//   cc -O2 -o mapped_reads mapped_reads.c && ./mapped_reads FILE [PAGES] [REPEATS]
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define VALUE 3880
#define MAP (64UL << 30)

static double cpu(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static long shared_pages(void)
{
    long size, resident, shared;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld %ld", &size, &resident, &shared) != 3) exit(1);
    fclose(f);
    return shared;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: %s FILE [PAGES] [REPEATS]\n", argv[0]); return 2; }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 1; }
    size_t n = argc > 2 ? strtoul(argv[2], 0, 10) : 14500, repeats = argc > 3 ? strtoul(argv[3], 0, 10) : 3;
    size_t pages = st.st_size / 4096;
    unsigned char *map = mmap(0, MAP, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) { perror("mmap"); return 1; }
    size_t *page = malloc(n * sizeof *page);
    srand(7);
    for (size_t i = 0; i < n; i++) page[i] = (size_t)rand() % pages;
    unsigned char buffer[4096];
    volatile unsigned sum = 0;
    for (size_t r = 0; r < repeats; r++) {
        double t = cpu();
        for (size_t i = 0; i < n; i++) {
            if (pread(fd, buffer, VALUE, page[i] * 4096) != VALUE) return 1;
            for (int j = 0; j < VALUE; j += 64) sum += buffer[j];
        }
        printf("pread  %6.1f ms CPU\n", (cpu() - t) * 1e3);
        t = cpu();
        long floor = shared_pages();
        int releases = 0;
        for (size_t i = 0; i < n; i++) {
            for (int j = 0; j < VALUE; j += 64) sum += map[page[i] * 4096 + j];
            if ((i & 63) == 63 && shared_pages() > floor + 1024) {
                madvise(map, MAP, MADV_DONTNEED);
                releases++;
                floor = shared_pages();
            }
        }
        printf("budget %6.1f ms CPU, %d releases\n", (cpu() - t) * 1e3, releases);
        madvise(map, MAP, MADV_DONTNEED);
        long before = shared_pages();
        t = cpu();
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < VALUE; j += 64) sum += map[page[i] * 4096 + j];
        printf("cold   %6.1f ms CPU, %ld pages mapped\n", (cpu() - t) * 1e3, shared_pages() - before);
        t = cpu();
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < VALUE; j += 64) sum += map[page[i] * 4096 + j];
        printf("warm   %6.1f ms CPU\n", (cpu() - t) * 1e3);
        madvise(map, MAP, MADV_DONTNEED);
    }
    return 0;
}
