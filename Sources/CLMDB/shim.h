#include <lmdb.h>

#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

// Debian 12's kernel headers predate these (Linux 5.11 and 6.7).
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC (1 << 15)
#endif

/// A userfaultfd in asynchronous write-protect mode (the kernel resolves its faults itself: no thread serves it),
/// for `sluice_lmdb_uffd_register`. Returns the descriptor, or -errno (ENOSYS: no such system call; EPERM: refused,
/// e.g. by a seccomp profile; EINVAL: a kernel before 6.7, without asynchronous write-protect).
static inline int sluice_lmdb_uffd_open(void) {
#ifdef SYS_userfaultfd
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
    if (fd < 0) return -errno;
    struct uffdio_api api = {.api = UFFD_API, .features = UFFD_FEATURE_WP_ASYNC};
    if (ioctl(fd, UFFDIO_API, &api) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
#else
    return -ENOSYS;
#endif
}

/// Registers [start, start + length) with `fd` in write-protect mode: the kernel then maps one page a read fault
/// there instead of the page and its cached neighbours (fault-around). Nothing is write-protected (LMDB's map is
/// read-only). Returns 0, or -errno (EPERM: a shared mapping of a file opened read-only).
static inline int sluice_lmdb_uffd_register(int fd, uintptr_t start, size_t length) {
    struct uffdio_register range = {.range = {start, length}, .mode = UFFDIO_REGISTER_MODE_WP};
    return ioctl(fd, UFFDIO_REGISTER, &range) == 0 ? 0 : -errno;
}

/// Gives [start, start + length) back the kernel's fault-around (a scan needs it: each page it reads would fault
/// alone). Returns 0, or -errno.
static inline int sluice_lmdb_uffd_unregister(int fd, uintptr_t start, size_t length) {
    struct uffdio_range range = {start, length};
    return ioctl(fd, UFFDIO_UNREGISTER, &range) == 0 ? 0 : -errno;
}

/// Replaces the read-only shared mapping at [start, start + length) of the file open as `data_fd` with the same
/// mapping (read-only, shared, offset 0) made from a descriptor of that file opened for reading and writing, so
/// that it can be registered (`sluice_lmdb_uffd_register` needs a mapping that could be made writable). The file
/// is reopened through /proc/self/fd, so it is the same file whatever its path names now. The new mapping is made
/// elsewhere first and then moved over the old one by `mremap`, which replaces it in one step: the range is never
/// unmapped in between. Call it before anything reads through the map (its resident pages are dropped). Returns 0,
/// or -errno (EACCES: this user may not write the file; ENOENT: no /proc).
static inline int sluice_lmdb_remap_writable(int data_fd, uintptr_t start, size_t length) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", data_fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -errno;
    void *made = mmap(NULL, length, PROT_READ, MAP_SHARED, fd, 0);
    int error = made == MAP_FAILED ? errno : 0;
    close(fd);
    if (error) return -error;
    // mremap through syscall(2): its flags and prototype need _GNU_SOURCE, which a module's header cannot rely on.
    long moved = syscall(SYS_mremap, made, length, length, 1 /* MREMAP_MAYMOVE */ | 2 /* MREMAP_FIXED */, start);
    if (moved == -1) {
        error = errno;
        munmap(made, length);
        return -error;
    }
    return 0;
}
#endif
