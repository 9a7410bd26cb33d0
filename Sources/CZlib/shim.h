// zlib: raw DEFLATE and CRC-32 for the DOCX container (SluiceExtract's ZIPArchive).
#pragma once
#include <zlib.h>

// inflateInit2 is a macro (it passes the version and the stream size); Swift cannot call it.
static inline int sluice_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}
