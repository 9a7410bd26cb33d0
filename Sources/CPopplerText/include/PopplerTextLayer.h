// A PDF's text layer through poppler's own text output device, as `pdftotext` extracts it, page by page.
//
// poppler-glib's `poppler_page_get_text` builds a new text output device for every page, so colour spaces
// cached on the device (ICC profiles become lcms transforms, ~0.4 ms each) are rebuilt on every page; on
// Debian's valgrind manual that is 35% of the CPU. One device per document, as here and in `pdftotext`,
// builds them once. The text is byte for byte what `pdftotext FILE` prints for the page, although the
// document's compressed streams are inflated by zlib instead of poppler's own inflater (PopplerFlateStream.h).
//
// A handle is not safe to use from two threads at once. Poppler errors are not printed.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct SluicePDFTextLayer SluicePDFTextLayer;

/// Why an open failed (poppler's error codes, collapsed).
typedef enum {
    SLUICE_PDF_TEXT_OK = 0,
    SLUICE_PDF_TEXT_DAMAGED = 1,    // not a PDF, truncated, or damaged beyond repair
    SLUICE_PDF_TEXT_ENCRYPTED = 2,  // encrypted, and the password is missing or wrong
    SLUICE_PDF_TEXT_UNREADABLE = 3, // the file cannot be opened
    SLUICE_PDF_TEXT_FAILED = 4      // anything else (including out of memory)
} SluicePDFTextStatus;

/// Opens the PDF at `path` (UTF-8) with `password` (user or owner; may be NULL).
/// Returns NULL and sets `*status` on failure.
SluicePDFTextLayer *sluice_pdf_text_open(const char *path, const char *password, SluicePDFTextStatus *status);

/// The number of pages.
int sluice_pdf_text_page_count(const SluicePDFTextLayer *layer);

/// The document information dictionary's text entry `key` ("Title", "Author") as UTF-8 (from PDFDocEncoding
/// or UTF-16), allocated with malloc for the caller to free; NULL if absent.
char *sluice_pdf_text_info(SluicePDFTextLayer *layer, const char *key);

/// The UTF-8 text of the page at zero-based `index`, without the form feed that ends a page, and its length
/// in `*length`. The bytes belong to `layer` and stay valid until its next call. NULL if `index` is out of
/// range or extraction failed.
const char *sluice_pdf_text_page(SluicePDFTextLayer *layer, int index, size_t *length);

/// Closes the document and frees the handle. NULL is ignored.
void sluice_pdf_text_close(SluicePDFTextLayer *layer);

/// The version of poppler this was built against ("22.12.0": `POPPLER_VERSION` of poppler-config.h), which is
/// the version of the libpoppler it runs with: Debian's libpoppler-private-dev requires that exact build, and
/// the library's soname changes with its C++ interface. The same string poppler-glib's `poppler_get_version`
/// returns (poppler-glib is built from the same source package).
const char *sluice_pdf_text_poppler_version(void);

#ifdef __cplusplus
}
#endif
