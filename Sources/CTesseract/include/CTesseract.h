// Tesseract's and leptonica's C API as Sluice uses it, loaded at first use (dlopen), not at process start.
//
// Linked the usual way, libtesseract brings 56 shared libraries (leptonica and its image codecs, libarchive,
// libcurl with its TLS and Kerberos stack, libgomp), and resolving them took about 17 ms of CPU at every
// start of `sluice` and of each extract worker, most of which never OCR (docs/EXTRACTORS.md, "Worker
// processes"). Now they are loaded by the first OCR engine, or by whatever asks for Tesseract's version.
//
// The declarations follow Tesseract 5's capi.h and leptonica's allheaders.h (their C APIs are stable); the
// types stay opaque here, so building needs no Tesseract headers. Call `sluice_tess_load` first: the other
// functions assume it succeeded.
#pragma once

#include <stddef.h>
#include <stdint.h>

typedef struct TessBaseAPI TessBaseAPI;
typedef struct Pix PIX;

/// Loads libtesseract (and with it leptonica) once per process; 0 when it is loaded, -1 when not (see
/// `sluice_tess_load_error`). Safe to call from any thread, any number of times.
int sluice_tess_load(void);
/// Why loading failed (the loader's message), or NULL when it did not.
const char *sluice_tess_load_error(void);
/// Whether libtesseract is loaded in this process (without loading it).
int sluice_tess_is_loaded(void);

/// `TessVersion()`, loading the library; NULL when it cannot be loaded.
const char *sluice_tess_version(void);

TessBaseAPI *sluice_tess_create(void);
void sluice_tess_delete(TessBaseAPI *handle);
int sluice_tess_init3(TessBaseAPI *handle, const char *datapath, const char *language);
int sluice_tess_set_variable(TessBaseAPI *handle, const char *name, const char *value);
void sluice_tess_set_page_seg_mode(TessBaseAPI *handle, int mode);
void sluice_tess_set_image(
    TessBaseAPI *handle, const unsigned char *pixels, int width, int height, int bytesPerPixel, int bytesPerLine);
void sluice_tess_set_image2(TessBaseAPI *handle, PIX *pix);
void sluice_tess_set_source_resolution(TessBaseAPI *handle, int ppi);
int sluice_tess_recognize(TessBaseAPI *handle);
char *sluice_tess_get_utf8_text(TessBaseAPI *handle);
void sluice_tess_delete_text(const char *text);
int sluice_tess_mean_text_conf(TessBaseAPI *handle);
void sluice_tess_clear(TessBaseAPI *handle);

PIX *sluice_pix_read(const char *path);
PIX *sluice_pix_read_mem(const uint8_t *data, size_t size);
void sluice_pix_destroy(PIX **pix);
int32_t sluice_pix_get_x_res(const PIX *pix);
