// A shared library loaded at first use (dlopen), with the functions a C target declares for it looked up
// into that target's table: what CTesseract and CPopplerGlib share. Each declares one `SluiceLazyLibrary`
// (its names and its functions) and loads it before the first call through its table.
#pragma once

#include <pthread.h>
#include <stddef.h>

/// A function to look up: its name in the library, and where to store its address.
typedef struct {
    const char *name;
    void **slot;
} SluiceSymbol;

typedef struct {
    /// The names to try, in order (the runtime package's soname first); `library` is its name in messages.
    const char *const *names;
    size_t nameCount;
    const char *library;
    const SluiceSymbol *symbols;
    size_t symbolCount;
    // Loading state (SLUICE_LAZY_LIBRARY initializes it).
    pthread_mutex_t lock;
    int tried;
    int loaded;
    char error[512];
} SluiceLazyLibrary;

/// A `SluiceLazyLibrary` for the arrays `names` and `symbols`, not loaded yet.
#define SLUICE_LAZY_LIBRARY(names, library, symbols)                                                             \
    {(names), sizeof(names) / sizeof((names)[0]), (library), (symbols), sizeof(symbols) / sizeof((symbols)[0]), \
        PTHREAD_MUTEX_INITIALIZER, 0, 0, {0}}

/// Loads the library (`dlopen` of the first name that loads, RTLD_NOW | RTLD_LOCAL) and looks up every
/// symbol, in it and in the libraries it depends on; once per process: later calls give the first one's
/// result. 0 when it is loaded, -1 when not. Safe to call from any thread.
int sluice_lazy_library_load(SluiceLazyLibrary *library);
/// Why loading failed (the loader's message for the first name, which names the library; or the function it
/// lacks), or NULL when it did not. Loads the library if that was not tried yet.
const char *sluice_lazy_library_error(SluiceLazyLibrary *library);
/// Whether the library is loaded (without loading it).
int sluice_lazy_library_is_loaded(SluiceLazyLibrary *library);
