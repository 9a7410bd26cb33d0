// zlib: raw DEFLATE and CRC-32 for the DOCX container (SluiceExtract's ZIPArchive), and gzip members
// (SluiceExtract's GzipMembers: gzipped sitemaps).
#pragma once
#include <zlib.h>

// inflateInit2 is a macro (it passes the version and the stream size); Swift cannot call it.
static inline int sluice_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}

// The gzip wrapper (RFC 1952): header, raw DEFLATE, CRC-32 and length checked by zlib itself.
static inline int sluice_inflate_init_gzip(z_stream *stream) {
    return inflateInit2(stream, 16 + MAX_WBITS);
}
