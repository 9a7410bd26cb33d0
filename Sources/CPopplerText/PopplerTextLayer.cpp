// See PopplerTextLayer.h.
#include "PopplerTextLayer.h"

#include <GlobalParams.h>
#include <poppler-config.h>
#include <PDFDoc.h>
#include <Stream.h>
#include <TextOutputDev.h>
#include <UTF.h>
#include <goo/GooString.h>
#include <goo/gmem.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

// Files up to this size are read into memory whole; larger ones are read through poppler's file stream.
static const off_t wholeFileLimit = 256 * 1024 * 1024;

struct SluicePDFTextLayer {
    // Shares poppler's global parameters with poppler-glib (the initer is reference counted).
    GlobalParamsIniter initer{[](ErrorCategory, Goffset, const char *) {}};
    // The file's bytes when read whole (declared before `document`, which reads them, so it outlives it).
    std::unique_ptr<char[]> bytes;
    std::unique_ptr<PDFDoc> document;
    std::string page;
    // Physical layout off, no fixed pitch, reading order (not raw), diagonal text kept: pdftotext's defaults.
    std::unique_ptr<TextOutputDev> device;
};

// Reads the whole file at `path` if it is a regular file of at most `wholeFileLimit` bytes. Poppler's file
// stream reads 256 bytes per pread(2) and seeks back and forth: 53,000 system calls for a 563 KB manual
// (`pdftotext` makes the same calls), about 7% of the CPU of extracting its text. One read and a memory
// stream make none. Returns false (and leaves the file to poppler, which reports why it cannot open it)
// when the file cannot be read this way.
static bool readWholeFile(const char *path, std::unique_ptr<char[]> &bytes, off_t &length)
{
    const int descriptor = open(path, O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) return false;
    struct stat status;
    bool ok = fstat(descriptor, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0
        && status.st_size <= wholeFileLimit;
    if (ok) {
        bytes.reset(new (std::nothrow) char[static_cast<size_t>(status.st_size)]);
        length = 0;
        ok = bytes != nullptr;
        while (ok && length < status.st_size) {
            const ssize_t got = read(descriptor, bytes.get() + length, static_cast<size_t>(status.st_size - length));
            if (got < 0 && errno == EINTR) continue;
            if (got <= 0) break;  // the file shrank while it was read: poppler sees what was there
            length += got;
        }
        ok = ok && length > 0;
    }
    close(descriptor);
    if (!ok) bytes.reset();
    return ok;
}

static void appendText(void *stream, const char *text, int length)
{
    static_cast<std::string *>(stream)->append(text, static_cast<size_t>(length));
}

extern "C" SluicePDFTextLayer *sluice_pdf_text_open(const char *path, const char *password, SluicePDFTextStatus *status)
{
    try {
        auto layer = std::make_unique<SluicePDFTextLayer>();
        std::optional<GooString> secret;
        if (password) secret.emplace(password);
        off_t length = 0;
        if (readWholeFile(path, layer->bytes, length)) {
            // The document owns the stream; the stream does not own the bytes (the layer does).
            auto *stream = new MemStream(layer->bytes.get(), 0, length, Object(objNull));
            layer->document = std::make_unique<PDFDoc>(stream, secret, secret);
        } else {
            layer->document = std::make_unique<PDFDoc>(std::make_unique<GooString>(path), secret, secret);
        }
        if (!layer->document->isOk()) {
            switch (layer->document->getErrorCode()) {
            case errEncrypted: *status = SLUICE_PDF_TEXT_ENCRYPTED; break;
            case errOpenFile: *status = SLUICE_PDF_TEXT_UNREADABLE; break;
            case errDamaged:
            case errBadCatalog: *status = SLUICE_PDF_TEXT_DAMAGED; break;
            default: *status = SLUICE_PDF_TEXT_FAILED; break;
            }
            return nullptr;
        }
        layer->device = std::make_unique<TextOutputDev>(appendText, &layer->page, false, 0, false, false);
        if (!layer->device->isOk()) {
            *status = SLUICE_PDF_TEXT_FAILED;
            return nullptr;
        }
        layer->device->setTextPageBreaks(false);
        *status = SLUICE_PDF_TEXT_OK;
        return layer.release();
    } catch (...) {
        *status = SLUICE_PDF_TEXT_FAILED;
        return nullptr;
    }
}

extern "C" int sluice_pdf_text_page_count(const SluicePDFTextLayer *layer)
{
    return layer->document->getNumPages();
}

extern "C" char *sluice_pdf_text_info(SluicePDFTextLayer *layer, const char *key)
{
    try {
        std::unique_ptr<GooString> entry = layer->document->getDocInfoStringEntry(key);
        if (!entry) return nullptr;
        Unicode *points = nullptr;
        const int count = TextStringToUCS4(entry->toStr(), &points);
        // Freed however this function leaves (std::string may throw while the text is built).
        const std::unique_ptr<Unicode, void (*)(void *)> owned(points, gfree);
        std::string utf8;
        for (int i = 0; i < count; i++) {
            const Unicode c = points[i];
            if (c < 0x80) {
                utf8 += static_cast<char>(c);
            } else if (c < 0x800) {
                utf8 += static_cast<char>(0xC0 | (c >> 6));
                utf8 += static_cast<char>(0x80 | (c & 0x3F));
            } else if (c < 0x10000) {
                if (c >= 0xD800 && c < 0xE000) continue;  // an unpaired surrogate
                utf8 += static_cast<char>(0xE0 | (c >> 12));
                utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
                utf8 += static_cast<char>(0x80 | (c & 0x3F));
            } else if (c < 0x110000) {
                utf8 += static_cast<char>(0xF0 | (c >> 18));
                utf8 += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
                utf8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
                utf8 += static_cast<char>(0x80 | (c & 0x3F));
            }
        }
        char *copy = static_cast<char *>(std::malloc(utf8.size() + 1));
        if (copy) std::memcpy(copy, utf8.c_str(), utf8.size() + 1);
        return copy;
    } catch (...) {
        return nullptr;
    }
}

extern "C" const char *sluice_pdf_text_page(SluicePDFTextLayer *layer, int index, size_t *length)
{
    if (index < 0 || index >= layer->document->getNumPages()) return nullptr;
    try {
        layer->page.clear();
        // 72 dpi, no rotation, media box, no crop, not printing: the call pdftotext makes for each page.
        layer->document->displayPage(layer->device.get(), index + 1, 72, 72, 0, true, false, false);
        *length = layer->page.size();
        return layer->page.c_str();
    } catch (...) {
        return nullptr;
    }
}

extern "C" void sluice_pdf_text_close(SluicePDFTextLayer *layer)
{
    delete layer;
}

extern "C" const char *sluice_pdf_text_poppler_version(void)
{
    return POPPLER_VERSION;
}
