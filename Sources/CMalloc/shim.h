// glibc's heap controls (malloc_trim, mallinfo2), which Swift's Glibc module does not export.
#pragma once
#if defined(__linux__)
#include <malloc.h>
#include <stddef.h>

/// Bytes free in glibc's arenas, returned to the kernel or not (`mallinfo2().fordblks`). A function of its own:
/// Swift would read `mallinfo2()` as the zero initializer of the struct of the same name.
static inline size_t sluice_malloc_free_bytes(void) {
    struct mallinfo2 info = mallinfo2();
    return info.fordblks;
}
#endif
