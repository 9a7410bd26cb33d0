// See PopplerFlateStream.h.
#include "PopplerFlateStream.h"

#include <Object.h>
#include <Stream.h>
#include <goo/GooString.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <new>
#include <string>
#include <zlib.h>

namespace {

std::atomic<long> inflatedStreams{0};

// A FlateDecode filter over `str` (which it owns, as poppler's filters do), inflated by zlib in blocks.
// `FilterStream` is not exported by libpoppler, so this derives from `Stream` and forwards what
// FilterStream would.
class SluiceFlateStream final : public Stream
{
public:
    explicit SluiceFlateStream(Stream *source) : str(source) { }

    ~SluiceFlateStream() override
    {
        if (started) inflateEnd(&zs);
        delete str;
    }

    StreamKind getKind() const override { return strFlate; }

    // Reads and checks the zlib header as poppler's decoder does (compression method 8, FCHECK, no preset
    // dictionary; the window size is not checked), then inflates the raw DEFLATE data after it. Like
    // poppler's, it ignores the Adler-32 trailer: a wrong checksum does not end the data early.
    void reset() override
    {
        str->reset();
        restart();
        const int cmf = str->getChar();
        const int flg = str->getChar();
        if (cmf == EOF || flg == EOF || (cmf & 0x0f) != 0x08 || ((cmf << 8) + flg) % 31 != 0 || (flg & 0x20)) {
            finished = true;
        }
        inflatedStreams.fetch_add(1, std::memory_order_relaxed);
    }

    // As poppler's: the stream below is reset without reading anything, and this one reads nothing until reset.
    void unfilteredReset() override
    {
        str->unfilteredReset();
        restart();
        finished = true;
    }

    int getChar() override
    {
        if (next == end && !refill()) return EOF;
        return *next++;
    }

    int lookChar() override
    {
        if (next == end && !refill()) return EOF;
        return *next;
    }

    // poppler's FlateStream returns the decoded bytes here too (its predictor reads them this way).
    int getRawChar() override { return getChar(); }

    void getRawChars(int nChars, int *buffer) override
    {
        for (int i = 0; i < nChars; i++) buffer[i] = getChar();
    }

    unsigned int discardChars(unsigned int n) override
    {
        unsigned int discarded = 0;
        while (discarded < n) {
            if (next == end && !refill()) break;
            const size_t step = std::min<size_t>(static_cast<size_t>(end - next), n - discarded);
            next += step;
            discarded += static_cast<unsigned int>(step);
        }
        return discarded;
    }

    GooString *getPSFilter(int psLevel, const char *indent) override
    {
        if (psLevel < 3) return nullptr;
        GooString *s = str->getPSFilter(psLevel, indent);
        if (!s) return nullptr;
        s->append(indent)->append("<< >> /FlateDecode filter\n");
        return s;
    }

    bool isBinary(bool /*last*/) const override { return str->isBinary(true); }

    // What FilterStream forwards to the stream below.
    void close() override { str->close(); }
    Goffset getPos() override { return str->getPos(); }
    void setPos(Goffset, int) override { }
    BaseStream *getBaseStream() override { return str->getBaseStream(); }
    Stream *getUndecodedStream() override { return str->getUndecodedStream(); }
    Dict *getDict() override { return str->getDict(); }
    Object *getDictObject() override { return str->getDictObject(); }
    Stream *getNextStream() const override { return str; }
    int getUnfilteredChar() override { return str->getUnfilteredChar(); }

private:
    bool hasGetChars() override { return true; }

    int getChars(int nChars, unsigned char *buffer) override
    {
        int copied = 0;
        while (copied < nChars) {
            if (next == end && !refill()) break;
            const size_t step = std::min<size_t>(static_cast<size_t>(end - next), static_cast<size_t>(nChars - copied));
            std::memcpy(buffer + copied, next, step);
            next += step;
            copied += static_cast<int>(step);
        }
        return copied;
    }

    void restart()
    {
        if (!started) {
            std::memset(&zs, 0, sizeof zs);
            started = inflateInit2(&zs, -15) == Z_OK;  // raw DEFLATE: reset() reads the header
        } else {
            inflateReset(&zs);
        }
        zs.next_in = nullptr;
        zs.avail_in = 0;
        next = end = output;
        inputEnded = false;
        finished = !started;
    }

    // Inflates the next block of output; false at the end of the data or at the first error zlib reports
    // (poppler's decoder also ends the stream at an error, keeping what it decoded before it).
    bool refill()
    {
        if (finished) return false;
        zs.next_out = output;
        zs.avail_out = sizeof output;
        while (zs.avail_out == sizeof output) {
            if (zs.avail_in == 0 && !inputEnded) {
                const int got = str->doGetChars(static_cast<int>(sizeof input), input);
                if (got <= 0) inputEnded = true;
                zs.next_in = input;
                zs.avail_in = got > 0 ? static_cast<unsigned>(got) : 0;
            }
            const int status = inflate(&zs, Z_NO_FLUSH);
            if (status == Z_STREAM_END) {
                finished = true;
                break;
            }
            if (status == Z_BUF_ERROR && inputEnded) {
                finished = true;  // truncated: no more input, no more output
                break;
            }
            if (status != Z_OK && status != Z_BUF_ERROR) {
                finished = true;  // damaged data, a preset dictionary, or out of memory
                break;
            }
        }
        next = output;
        end = output + (sizeof output - zs.avail_out);
        return next != end;
    }

    Stream *str;
    z_stream zs;
    bool started = false;
    bool inputEnded = false;
    bool finished = true;
    unsigned char *next = output;
    unsigned char *end = output;
    unsigned char input[16384];
    unsigned char output[65536];
};

using MakeFilter = Stream *(*)(Stream *, const char *, Stream *, Object *, int, Dict *);

// poppler's own Stream::makeFilter: the next definition after this executable's.
MakeFilter popplerMakeFilter()
{
    static const MakeFilter original = [] {
        const char *symbol = "_ZN6Stream10makeFilterEPKcPS_P6ObjectiP4Dict";
        void *found = dlsym(RTLD_NEXT, symbol);
        // Not found after this object (e.g. if this code were itself in a library loaded after poppler's):
        // ask the library that holds Stream::addFilters, which is poppler's.
        if (!found) {
            Dl_info info;
            void *addFilters = dlsym(RTLD_DEFAULT, "_ZN6Stream10addFiltersEP4Dicti");
            if (addFilters && dladdr(addFilters, &info) && info.dli_fname) {
                if (void *poppler = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)) found = dlsym(poppler, symbol);
            }
        }
        if (!found) {
            std::fprintf(stderr, "sluice: poppler's Stream::makeFilter not found\n");
            std::abort();
        }
        return reinterpret_cast<MakeFilter>(found);
    }();
    return original;
}

// Whether FlateDecode with these parameters has a predictor (poppler applies one for any integer /Predictor
// other than 1).
bool hasPredictor(Object *params)
{
    if (!params || !params->isDict()) return false;
    const Object predictor = params->dictLookup("Predictor");
    return predictor.isInt() && predictor.getInt() != 1;
}

// Whether the data comes from inside another stream (an inline image: BI … ID data EI in page content).
bool isEmbedded(Stream *str)
{
    return dynamic_cast<EmbedStream *>(str->getBaseStream()) != nullptr;
}

} // namespace

// Replaces poppler's definition for every caller of Stream::addFilters in this process (see the header).
Stream *Stream::makeFilter(const char *name, Stream *str, Object *params, int recursion, Dict *dict)
{
    if (name && str && (std::strcmp(name, "FlateDecode") == 0 || std::strcmp(name, "Fl") == 0)
        && !hasPredictor(params) && !isEmbedded(str)) {
        return new SluiceFlateStream(str);
    }
    return popplerMakeFilter()(this, name, str, params, recursion, dict);
}

extern "C" unsigned char *sluice_pdf_flate_decode(
    const unsigned char *bytes, size_t length, SluicePDFFlateDecoder decoder, int byteAtATime, size_t *decodedLength)
{
    try {
        Stream *base = new MemStream(reinterpret_cast<const char *>(bytes), 0, static_cast<Goffset>(length), Object(objNull));
        Stream *filter;
        if (decoder == SLUICE_PDF_FLATE_ZLIB) {
            filter = new SluiceFlateStream(base);
        } else {
            Object params(objNull);
            filter = popplerMakeFilter()(base, "FlateDecode", base, &params, 0, nullptr);
        }
        const std::unique_ptr<Stream> owned(filter);  // deletes `base` with it, as poppler's filters do
        std::string decoded;
        filter->reset();
        if (byteAtATime) {
            for (int c = filter->getChar(); c != EOF; c = filter->getChar()) decoded += static_cast<char>(c);
        } else {
            unsigned char block[1000];
            int got;
            while ((got = filter->doGetChars(sizeof block, block)) > 0) decoded.append(reinterpret_cast<char *>(block), got);
        }
        unsigned char *copy = static_cast<unsigned char *>(std::malloc(decoded.size() + 1));
        if (!copy) return nullptr;
        std::memcpy(copy, decoded.data(), decoded.size());
        *decodedLength = decoded.size();
        return copy;
    } catch (...) {
        return nullptr;
    }
}

extern "C" long sluice_pdf_flate_streams_inflated(void)
{
    return inflatedStreams.load(std::memory_order_relaxed);
}
