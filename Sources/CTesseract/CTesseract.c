#include "CTesseract.h"

#include <SluiceDynamicLibrary.h>

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

// The runtime package's names (Debian's libtesseract5; Homebrew's dylib), then the development link.
static const char *const names[] = {
    "libtesseract.so.5", "libtesseract.5.dylib", "libtesseract.so", "libtesseract.dylib",
};
// Leptonica's functions come from libtesseract's dependencies.
static const SluiceSymbol symbols[] = {
    {"TessVersion", (void **)&api.version},
    {"TessBaseAPICreate", (void **)&api.create},
    {"TessBaseAPIDelete", (void **)&api.delete},
    {"TessBaseAPIInit3", (void **)&api.init3},
    {"TessBaseAPISetVariable", (void **)&api.setVariable},
    {"TessBaseAPISetPageSegMode", (void **)&api.setPageSegMode},
    {"TessBaseAPISetImage", (void **)&api.setImage},
    {"TessBaseAPISetImage2", (void **)&api.setImage2},
    {"TessBaseAPISetSourceResolution", (void **)&api.setSourceResolution},
    {"TessBaseAPIRecognize", (void **)&api.recognize},
    {"TessBaseAPIGetUTF8Text", (void **)&api.getUTF8Text},
    {"TessDeleteText", (void **)&api.deleteText},
    {"TessBaseAPIMeanTextConf", (void **)&api.meanTextConf},
    {"TessBaseAPIClear", (void **)&api.clear},
    {"pixRead", (void **)&api.pixRead},
    {"pixReadMem", (void **)&api.pixReadMem},
    {"pixDestroy", (void **)&api.pixDestroy},
    {"pixGetXRes", (void **)&api.pixGetXRes},
};
static SluiceLazyLibrary library = SLUICE_LAZY_LIBRARY(names, "libtesseract", symbols);

int sluice_tess_load(void) { return sluice_lazy_library_load(&library); }
const char *sluice_tess_load_error(void) { return sluice_lazy_library_error(&library); }
int sluice_tess_is_loaded(void) { return sluice_lazy_library_is_loaded(&library); }

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
