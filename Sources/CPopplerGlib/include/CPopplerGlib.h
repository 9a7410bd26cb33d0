// poppler-glib and cairo as Sluice uses them (rendering PDF pages for OCR), loaded at first use (dlopen), not
// at process start.
//
// Linked the usual way, poppler-glib brings cairo, glib, gobject, gio, pixman and the X11 client libraries:
// 22 shared libraries, which the dynamic loader mapped and bound at every start of `sluice` and of each
// extract worker (about 4 ms of CPU), though only a page rendered for OCR uses them (the text layer, page
// count, title and author come from poppler's core library, CPopplerText). Now the first page rendered
// loads them (docs/EXTRACTORS.md, "Worker processes").
//
// The declarations follow poppler-glib's and cairo's C APIs (stable: libpoppler-glib.so.8, libcairo.so.2);
// the types stay opaque here, so building needs no poppler-glib, cairo or glib headers. Call
// `sluice_poppler_glib_load` first: the other functions assume it succeeded.
#pragma once

#include <stddef.h>

typedef struct SluicePopplerDocument SluicePopplerDocument;  // PopplerDocument
typedef struct SluicePopplerPage SluicePopplerPage;          // PopplerPage
typedef struct SluiceCairoSurface SluiceCairoSurface;        // cairo_surface_t
typedef struct SluiceCairo SluiceCairo;                      // cairo_t

/// Loads libpoppler-glib (and with it cairo and glib) once per process; 0 when it is loaded, -1 when not (see
/// `sluice_poppler_glib_load_error`). Safe to call from any thread, any number of times.
int sluice_poppler_glib_load(void);
/// Why loading failed (the loader's message, which names the library), or NULL when it did not.
const char *sluice_poppler_glib_load_error(void);
/// Whether libpoppler-glib is loaded in this process (without loading it).
int sluice_poppler_glib_is_loaded(void);

/// `poppler_get_version()`, loading the library; NULL when it cannot be loaded.
const char *sluice_poppler_glib_version(void);

/// Why `sluice_poppler_document_open` failed.
typedef enum {
    SLUICE_POPPLER_GLIB_OK = 0,
    SLUICE_POPPLER_GLIB_NO_URI = 1,     // the path cannot be made a file URI (g_filename_to_uri)
    SLUICE_POPPLER_GLIB_FAILED = 2,     // poppler_document_new_from_file failed
    SLUICE_POPPLER_GLIB_ENCRYPTED = 3   // ... with POPPLER_ERROR_ENCRYPTED
} SluicePopplerGlibStatus;

/// Opens the PDF at the absolute `path` (`poppler_document_new_from_file` on its file URI) with `password`
/// (may be NULL). Returns NULL on failure, with `*status` set and `*message` the GError's message (allocated
/// with malloc for the caller to free; NULL when there was none).
SluicePopplerDocument *sluice_poppler_document_open(
    const char *path, const char *password, SluicePopplerGlibStatus *status, char **message);
/// Releases the document (`g_object_unref`).
void sluice_poppler_document_release(SluicePopplerDocument *document);
/// `poppler_document_get_page`: the page at zero-based `index`, owned by the caller; NULL when it cannot be
/// loaded.
SluicePopplerPage *sluice_poppler_document_get_page(SluicePopplerDocument *document, int index);
/// Releases the page (`g_object_unref`).
void sluice_poppler_page_release(SluicePopplerPage *page);
void sluice_poppler_page_get_size(SluicePopplerPage *page, double *width, double *height);
void sluice_poppler_page_render_for_printing(SluicePopplerPage *page, SluiceCairo *cairo);
/// The share of the page's crop box that raster images cover, from 0 (no image) to 1: the areas where the page
/// places its images (`poppler_page_get_image_mapping`: every image drawn, inline images and stencil masks
/// included, without decoding their pixels), each clipped to the crop box, summed and capped at 1 (images
/// that overlap count twice, which errs toward OCR). Sets `*count` to the number of images placed.
double sluice_poppler_page_image_coverage(SluicePopplerPage *page, int *count);
/// The ids of the images the page places (`poppler_page_get_image_mapping`), up to `capacity` of them written
/// to `ids`; returns how many the page places.
int sluice_poppler_page_image_ids(SluicePopplerPage *page, int *ids, int capacity);
/// `poppler_page_get_image`: the image `id` decoded, owned by the caller (`sluice_cairo_surface_destroy`);
/// NULL when poppler cannot render it.
SluiceCairoSurface *sluice_poppler_page_get_image(SluicePopplerPage *page, int id);
int sluice_cairo_image_surface_get_width(SluiceCairoSurface *surface);
int sluice_cairo_image_surface_get_height(SluiceCairoSurface *surface);
/// The surface as a PNG file (`cairo_surface_write_to_png_stream`), allocated with malloc for the caller to
/// free and its length in `*length`; NULL when cairo cannot write it.
unsigned char *sluice_cairo_surface_png(SluiceCairoSurface *surface, size_t *length);

/// `cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height)`: never NULL (cairo returns a surface in an
/// error state instead; see `sluice_cairo_surface_ok`).
SluiceCairoSurface *sluice_cairo_image_surface_create_rgb24(int width, int height);
/// Whether `cairo_surface_status` is `CAIRO_STATUS_SUCCESS`.
int sluice_cairo_surface_ok(SluiceCairoSurface *surface);
void sluice_cairo_surface_destroy(SluiceCairoSurface *surface);
void sluice_cairo_surface_flush(SluiceCairoSurface *surface);
unsigned char *sluice_cairo_image_surface_get_data(SluiceCairoSurface *surface);
int sluice_cairo_image_surface_get_stride(SluiceCairoSurface *surface);
SluiceCairo *sluice_cairo_create(SluiceCairoSurface *surface);
void sluice_cairo_destroy(SluiceCairo *cairo);
void sluice_cairo_set_source_rgb(SluiceCairo *cairo, double red, double green, double blue);
void sluice_cairo_paint(SluiceCairo *cairo);
void sluice_cairo_scale(SluiceCairo *cairo, double sx, double sy);
