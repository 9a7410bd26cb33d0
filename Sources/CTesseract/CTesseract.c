#include "CTesseract.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// The libraries' own names for what the header declares (capi.h, allheaders.h).
static struct {
    const char *(*version)(void);
    TessBaseAPI *(*create)(void);
    void (*delete)(TessBaseAPI *);
    int (*init3)(TessBaseAPI *, const char *, const char *);
    int (*setVariable)(TessBaseAPI *, const char *, const char *);
    void (*setPageSegMode)(TessBaseAPI *, int);
    void (*setImage)(TessBaseAPI *, const unsigned char *, int, int, int, int);
    void (*setImage2)(TessBaseAPI *, PIX *);
    void (*setSourceResolution)(TessBaseAPI *, int);
    int (*recognize)(TessBaseAPI *, void *);
    char *(*getUTF8Text)(TessBaseAPI *);
    void (*deleteText)(const char *);
    int (*meanTextConf)(TessBaseAPI *);
    void (*clear)(TessBaseAPI *);
    PIX *(*pixRead)(const char *);
    PIX *(*pixReadMem)(const uint8_t *, size_t);
    void (*pixDestroy)(PIX **);
    int32_t (*pixGetXRes)(const PIX *);
} api;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded = 0;
static char loadError[512];

static void *lookUp(void *library, const char *name, int *missing) {
    void *symbol = dlsym(library, name);
    if (symbol == NULL && *missing == 0) {
        *missing = 1;
        snprintf(loadError, sizeof loadError, "libtesseract has no %s", name);
    }
    return symbol;
}

static void load(void) {
    // The runtime package's names (Debian's libtesseract5; Homebrew's dylib), then the development link.
    static const char *const names[] = {
        "libtesseract.so.5", "libtesseract.5.dylib", "libtesseract.so", "libtesseract.dylib",
    };
    void *library = NULL;
    for (size_t i = 0; library == NULL && i < sizeof names / sizeof names[0]; i++) {
        library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (library == NULL && i == 0) {
            const char *reason = dlerror();
            snprintf(loadError, sizeof loadError, "%s", reason ? reason : "cannot load libtesseract.so.5");
        }
    }
    if (library == NULL) return;
    int missing = 0;
    // dlsym on the library's handle searches its dependencies too: leptonica's functions come from there.
    api.version = lookUp(library, "TessVersion", &missing);
    api.create = lookUp(library, "TessBaseAPICreate", &missing);
    api.delete = lookUp(library, "TessBaseAPIDelete", &missing);
    api.init3 = lookUp(library, "TessBaseAPIInit3", &missing);
    api.setVariable = lookUp(library, "TessBaseAPISetVariable", &missing);
    api.setPageSegMode = lookUp(library, "TessBaseAPISetPageSegMode", &missing);
    api.setImage = lookUp(library, "TessBaseAPISetImage", &missing);
    api.setImage2 = lookUp(library, "TessBaseAPISetImage2", &missing);
    api.setSourceResolution = lookUp(library, "TessBaseAPISetSourceResolution", &missing);
    api.recognize = lookUp(library, "TessBaseAPIRecognize", &missing);
    api.getUTF8Text = lookUp(library, "TessBaseAPIGetUTF8Text", &missing);
    api.deleteText = lookUp(library, "TessDeleteText", &missing);
    api.meanTextConf = lookUp(library, "TessBaseAPIMeanTextConf", &missing);
    api.clear = lookUp(library, "TessBaseAPIClear", &missing);
    api.pixRead = lookUp(library, "pixRead", &missing);
    api.pixReadMem = lookUp(library, "pixReadMem", &missing);
    api.pixDestroy = lookUp(library, "pixDestroy", &missing);
    api.pixGetXRes = lookUp(library, "pixGetXRes", &missing);
    if (missing == 0) {
        loadError[0] = '\0';
        __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
    }
}

int sluice_tess_load(void) {
    pthread_once(&once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) ? 0 : -1;
}

const char *sluice_tess_load_error(void) {
    return sluice_tess_load() == 0 ? NULL : loadError;
}

int sluice_tess_is_loaded(void) { return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE); }

const char *sluice_tess_version(void) { return sluice_tess_load() == 0 ? api.version() : NULL; }

TessBaseAPI *sluice_tess_create(void) { return api.create(); }
void sluice_tess_delete(TessBaseAPI *handle) { api.delete(handle); }
int sluice_tess_init3(TessBaseAPI *handle, const char *datapath, const char *language) {
    return api.init3(handle, datapath, language);
}
int sluice_tess_set_variable(TessBaseAPI *handle, const char *name, const char *value) {
    return api.setVariable(handle, name, value);
}
void sluice_tess_set_page_seg_mode(TessBaseAPI *handle, int mode) { api.setPageSegMode(handle, mode); }
void sluice_tess_set_image(
    TessBaseAPI *handle, const unsigned char *pixels, int width, int height, int bytesPerPixel, int bytesPerLine) {
    api.setImage(handle, pixels, width, height, bytesPerPixel, bytesPerLine);
}
void sluice_tess_set_image2(TessBaseAPI *handle, PIX *pix) { api.setImage2(handle, pix); }
void sluice_tess_set_source_resolution(TessBaseAPI *handle, int ppi) { api.setSourceResolution(handle, ppi); }
int sluice_tess_recognize(TessBaseAPI *handle) { return api.recognize(handle, NULL); }
char *sluice_tess_get_utf8_text(TessBaseAPI *handle) { return api.getUTF8Text(handle); }
void sluice_tess_delete_text(const char *text) { api.deleteText(text); }
int sluice_tess_mean_text_conf(TessBaseAPI *handle) { return api.meanTextConf(handle); }
void sluice_tess_clear(TessBaseAPI *handle) { api.clear(handle); }

PIX *sluice_pix_read(const char *path) { return api.pixRead(path); }
PIX *sluice_pix_read_mem(const uint8_t *data, size_t size) { return api.pixReadMem(data, size); }
void sluice_pix_destroy(PIX **pix) { api.pixDestroy(pix); }
int32_t sluice_pix_get_x_res(const PIX *pix) { return api.pixGetXRes(pix); }
