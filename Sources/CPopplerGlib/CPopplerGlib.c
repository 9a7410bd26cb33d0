#include "CPopplerGlib.h"

#include <SluiceDynamicLibrary.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// glib's GError (gerror.h; its layout is part of glib's stable ABI).
typedef struct {
    uint32_t domain;
    int code;
    char *message;
} GError;

// glib's GList and poppler-glib's PopplerRectangle and PopplerImageMapping (glist.h, poppler-page.h; stable ABI).
typedef struct GList {
    void *data;
    struct GList *next;
    struct GList *prev;
} GList;
typedef struct {
    double x1, y1, x2, y2;
} PopplerRectangle;
typedef struct {
    PopplerRectangle area;
    int image_id;
} PopplerImageMapping;

enum {
    POPPLER_ERROR_ENCRYPTED = 1,  // poppler.h's PopplerError
    CAIRO_FORMAT_RGB24 = 1,       // cairo.h's cairo_format_t
    CAIRO_STATUS_SUCCESS = 0,     // cairo.h's cairo_status_t
};

// The libraries' own names for what the header declares (poppler.h, cairo.h, glib's and gobject's headers).
static struct {
    const char *(*popplerGetVersion)(void);
    uint32_t (*popplerErrorQuark)(void);
    void *(*documentNewFromFile)(const char *, const char *, GError **);
    void *(*documentGetPage)(void *, int);
    void (*pageGetSize)(void *, double *, double *);
    void (*pageRenderForPrinting)(void *, void *);
    GList *(*pageGetImageMapping)(void *);
    void (*pageFreeImageMapping)(GList *);
    void (*pageGetCropBox)(void *, PopplerRectangle *);
    char *(*filenameToURI)(const char *, const char *, GError **);
    void (*gFree)(void *);
    void (*errorFree)(GError *);
    void (*objectUnref)(void *);
    void *(*imageSurfaceCreate)(int, int, int);
    int (*surfaceStatus)(void *);
    void (*surfaceDestroy)(void *);
    void (*surfaceFlush)(void *);
    unsigned char *(*imageSurfaceGetData)(void *);
    int (*imageSurfaceGetStride)(void *);
    void *(*cairoCreate)(void *);
    void (*cairoDestroy)(void *);
    void (*setSourceRGB)(void *, double, double, double);
    void (*paint)(void *);
    void (*scale)(void *, double, double);
    void *(*pageGetImage)(void *, int);
    int (*imageSurfaceGetWidth)(void *);
    int (*imageSurfaceGetHeight)(void *);
    int (*surfaceWriteToPNGStream)(void *, int (*)(void *, const unsigned char *, unsigned int), void *);
} api;

// The runtime package's name (Debian's libpoppler-glib8; Homebrew's dylib), then the development link.
static const char *const names[] = {
    "libpoppler-glib.so.8", "libpoppler-glib.8.dylib", "libpoppler-glib.so", "libpoppler-glib.dylib",
};
// cairo's, glib's and gobject's functions come from libpoppler-glib's dependencies (libcairo.so.2,
// libglib-2.0.so.0 and libgobject-2.0.so.0 are among its own).
static const SluiceSymbol symbols[] = {
    {"poppler_get_version", (void **)&api.popplerGetVersion},
    {"poppler_error_quark", (void **)&api.popplerErrorQuark},
    {"poppler_document_new_from_file", (void **)&api.documentNewFromFile},
    {"poppler_document_get_page", (void **)&api.documentGetPage},
    {"poppler_page_get_size", (void **)&api.pageGetSize},
    {"poppler_page_render_for_printing", (void **)&api.pageRenderForPrinting},
    {"poppler_page_get_image_mapping", (void **)&api.pageGetImageMapping},
    {"poppler_page_free_image_mapping", (void **)&api.pageFreeImageMapping},
    {"poppler_page_get_crop_box", (void **)&api.pageGetCropBox},
    {"g_filename_to_uri", (void **)&api.filenameToURI},
    {"g_free", (void **)&api.gFree},
    {"g_error_free", (void **)&api.errorFree},
    {"g_object_unref", (void **)&api.objectUnref},
    {"cairo_image_surface_create", (void **)&api.imageSurfaceCreate},
    {"cairo_surface_status", (void **)&api.surfaceStatus},
    {"cairo_surface_destroy", (void **)&api.surfaceDestroy},
    {"cairo_surface_flush", (void **)&api.surfaceFlush},
    {"cairo_image_surface_get_data", (void **)&api.imageSurfaceGetData},
    {"cairo_image_surface_get_stride", (void **)&api.imageSurfaceGetStride},
    {"cairo_create", (void **)&api.cairoCreate},
    {"cairo_destroy", (void **)&api.cairoDestroy},
    {"cairo_set_source_rgb", (void **)&api.setSourceRGB},
    {"cairo_paint", (void **)&api.paint},
    {"cairo_scale", (void **)&api.scale},
    {"poppler_page_get_image", (void **)&api.pageGetImage},
    {"cairo_image_surface_get_width", (void **)&api.imageSurfaceGetWidth},
    {"cairo_image_surface_get_height", (void **)&api.imageSurfaceGetHeight},
    {"cairo_surface_write_to_png_stream", (void **)&api.surfaceWriteToPNGStream},
};
static SluiceLazyLibrary library = SLUICE_LAZY_LIBRARY(names, "libpoppler-glib", symbols);

int sluice_poppler_glib_load(void) { return sluice_lazy_library_load(&library); }
const char *sluice_poppler_glib_load_error(void) { return sluice_lazy_library_error(&library); }
int sluice_poppler_glib_is_loaded(void) { return sluice_lazy_library_is_loaded(&library); }

const char *sluice_poppler_glib_version(void) {
    return sluice_poppler_glib_load() == 0 ? api.popplerGetVersion() : NULL;
}

// Copies (with malloc) and frees a GError's message; NULL for no error or no message.
static char *takeMessage(GError *error) {
    if (error == NULL) return NULL;
    char *message = error->message ? strdup(error->message) : NULL;
    api.errorFree(error);
    return message;
}

SluicePopplerDocument *sluice_poppler_document_open(
    const char *path, const char *password, SluicePopplerGlibStatus *status, char **message) {
    *message = NULL;
    GError *error = NULL;
    char *uri = api.filenameToURI(path, NULL, &error);
    if (uri == NULL) {
        *status = SLUICE_POPPLER_GLIB_NO_URI;
        *message = takeMessage(error);
        return NULL;
    }
    void *document = api.documentNewFromFile(uri, password, &error);
    api.gFree(uri);
    if (document == NULL) {
        int encrypted = error != NULL && error->domain == api.popplerErrorQuark()
            && error->code == POPPLER_ERROR_ENCRYPTED;
        *status = encrypted ? SLUICE_POPPLER_GLIB_ENCRYPTED : SLUICE_POPPLER_GLIB_FAILED;
        *message = takeMessage(error);
        return NULL;
    }
    *status = SLUICE_POPPLER_GLIB_OK;
    return document;
}

void sluice_poppler_document_release(SluicePopplerDocument *document) { api.objectUnref(document); }
SluicePopplerPage *sluice_poppler_document_get_page(SluicePopplerDocument *document, int index) {
    return api.documentGetPage(document, index);
}
void sluice_poppler_page_release(SluicePopplerPage *page) { api.objectUnref(page); }
void sluice_poppler_page_get_size(SluicePopplerPage *page, double *width, double *height) {
    api.pageGetSize(page, width, height);
}
void sluice_poppler_page_render_for_printing(SluicePopplerPage *page, SluiceCairo *cairo) {
    api.pageRenderForPrinting(page, cairo);
}

// The length of [low, high] within [0, limit].
static double clippedLength(double low, double high, double limit) {
    if (low > high) {
        double swap = low;
        low = high;
        high = swap;
    }
    if (low < 0) low = 0;
    if (high > limit) high = limit;
    return high > low ? high - low : 0;
}

double sluice_poppler_page_image_coverage(SluicePopplerPage *page, int *count) {
    *count = 0;
    // The mapping's areas are in points relative to the crop box's corner, unrotated
    // (poppler_page_get_image_mapping subtracts the crop box's origin), so they are clipped to its size.
    PopplerRectangle crop = {0, 0, 0, 0};
    api.pageGetCropBox(page, &crop);
    double width = crop.x2 > crop.x1 ? crop.x2 - crop.x1 : crop.x1 - crop.x2;
    double height = crop.y2 > crop.y1 ? crop.y2 - crop.y1 : crop.y1 - crop.y2;
    GList *mapping = api.pageGetImageMapping(page);
    double covered = 0;
    for (GList *item = mapping; item != NULL; item = item->next) {
        const PopplerImageMapping *image = item->data;
        covered += clippedLength(image->area.x1, image->area.x2, width)
            * clippedLength(image->area.y1, image->area.y2, height);
        *count += 1;
    }
    if (mapping != NULL) api.pageFreeImageMapping(mapping);
    if (width <= 0 || height <= 0) return *count > 0 ? 1 : 0;
    double share = covered / (width * height);
    return share > 1 ? 1 : share;
}

int sluice_poppler_page_image_ids(SluicePopplerPage *page, int *ids, int capacity) {
    GList *mapping = api.pageGetImageMapping(page);
    int count = 0;
    for (GList *item = mapping; item != NULL; item = item->next) {
        if (count < capacity) ids[count] = ((const PopplerImageMapping *)item->data)->image_id;
        count += 1;
    }
    if (mapping != NULL) api.pageFreeImageMapping(mapping);
    return count;
}

SluiceCairoSurface *sluice_poppler_page_get_image(SluicePopplerPage *page, int id) {
    return api.pageGetImage(page, id);
}
int sluice_cairo_image_surface_get_width(SluiceCairoSurface *surface) { return api.imageSurfaceGetWidth(surface); }
int sluice_cairo_image_surface_get_height(SluiceCairoSurface *surface) { return api.imageSurfaceGetHeight(surface); }

typedef struct {
    unsigned char *bytes;
    size_t length, capacity;
} PNGBuffer;

static int appendPNG(void *closure, const unsigned char *data, unsigned int length) {
    PNGBuffer *buffer = closure;
    if (buffer->length + length > buffer->capacity) {
        size_t capacity = buffer->capacity ? buffer->capacity * 2 : 65536;
        while (capacity < buffer->length + length) capacity *= 2;
        unsigned char *grown = realloc(buffer->bytes, capacity);
        if (grown == NULL) return 11;  // CAIRO_STATUS_WRITE_ERROR
        buffer->bytes = grown;
        buffer->capacity = capacity;
    }
    memcpy(buffer->bytes + buffer->length, data, length);
    buffer->length += length;
    return CAIRO_STATUS_SUCCESS;
}

unsigned char *sluice_cairo_surface_png(SluiceCairoSurface *surface, size_t *length) {
    PNGBuffer buffer = {NULL, 0, 0};
    if (api.surfaceWriteToPNGStream(surface, appendPNG, &buffer) != CAIRO_STATUS_SUCCESS) {
        free(buffer.bytes);
        *length = 0;
        return NULL;
    }
    *length = buffer.length;
    return buffer.bytes;
}

SluiceCairoSurface *sluice_cairo_image_surface_create_rgb24(int width, int height) {
    return api.imageSurfaceCreate(CAIRO_FORMAT_RGB24, width, height);
}
int sluice_cairo_surface_ok(SluiceCairoSurface *surface) {
    return api.surfaceStatus(surface) == CAIRO_STATUS_SUCCESS;
}
void sluice_cairo_surface_destroy(SluiceCairoSurface *surface) { api.surfaceDestroy(surface); }
void sluice_cairo_surface_flush(SluiceCairoSurface *surface) { api.surfaceFlush(surface); }
unsigned char *sluice_cairo_image_surface_get_data(SluiceCairoSurface *surface) {
    return api.imageSurfaceGetData(surface);
}
int sluice_cairo_image_surface_get_stride(SluiceCairoSurface *surface) { return api.imageSurfaceGetStride(surface); }
SluiceCairo *sluice_cairo_create(SluiceCairoSurface *surface) { return api.cairoCreate(surface); }
void sluice_cairo_destroy(SluiceCairo *cairo) { api.cairoDestroy(cairo); }
void sluice_cairo_set_source_rgb(SluiceCairo *cairo, double red, double green, double blue) {
    api.setSourceRGB(cairo, red, green, blue);
}
void sluice_cairo_paint(SluiceCairo *cairo) { api.paint(cairo); }
void sluice_cairo_scale(SluiceCairo *cairo, double sx, double sy) { api.scale(cairo, sx, sy); }
