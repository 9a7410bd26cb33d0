#include "SluiceDynamicLibrary.h"

#include <dlfcn.h>
#include <stdio.h>

// Opens the library and fills the table; with the lock held, once.
static void openLibrary(SluiceLazyLibrary *library) {
    void *handle = NULL;
    for (size_t i = 0; handle == NULL && i < library->nameCount; i++) {
        handle = dlopen(library->names[i], RTLD_NOW | RTLD_LOCAL);
        if (handle == NULL && i == 0) {
            const char *reason = dlerror();
            if (reason != NULL) snprintf(library->error, sizeof library->error, "%s", reason);
            else snprintf(library->error, sizeof library->error, "cannot load %s", library->names[0]);
        }
    }
    if (handle == NULL) return;
    // dlsym on a library's handle searches its dependencies too (breadth first).
    for (size_t i = 0; i < library->symbolCount; i++) {
        *library->symbols[i].slot = dlsym(handle, library->symbols[i].name);
        if (*library->symbols[i].slot == NULL) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->library,
                library->symbols[i].name);
            return;
        }
    }
    library->error[0] = '\0';
    __atomic_store_n(&library->loaded, 1, __ATOMIC_RELEASE);
}

int sluice_lazy_library_load(SluiceLazyLibrary *library) {
    if (__atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE)) return 0;
    pthread_mutex_lock(&library->lock);
    if (!library->tried) {
        library->tried = 1;
        openLibrary(library);
    }
    const int loaded = library->loaded;
    pthread_mutex_unlock(&library->lock);
    return loaded ? 0 : -1;
}

const char *sluice_lazy_library_error(SluiceLazyLibrary *library) {
    // After a failed load the message is written and never changes.
    return sluice_lazy_library_load(library) == 0 ? NULL : library->error;
}

int sluice_lazy_library_is_loaded(SluiceLazyLibrary *library) {
    return __atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE);
}
