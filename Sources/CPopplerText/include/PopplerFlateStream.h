// FlateDecode streams inflated by zlib instead of poppler's own decoder.
//
// Debian builds poppler without ENABLE_ZLIB_UNCOMPRESS, so every compressed content stream, font, ToUnicode map
// and object stream goes through poppler's built-in inflater, which reads one byte per virtual call and rebuilds
// a 2^15-entry lookup table for every dynamic Huffman block: with zlib in its place a worker extracting the
// text of Debian's PDF manuals uses 13–17% less CPU per page (`pdftotext` still pays it). PopplerFlateStream.cpp defines
// poppler's `Stream::makeFilter` (a private member that `Stream::addFilters` calls through the PLT, so a
// definition in the executable takes its place, as a `malloc` would; ELF only: on Apple platforms two-level
// namespaces keep poppler's own, and nothing else changes): FlateDecode without a predictor gets
// `SluiceFlateStream` (zlib), everything else poppler's own filter. Two cases keep poppler's decoder: a
// predictor (PNG/TIFF rows, cross-reference streams), and inline images, whose compressed bytes are followed
// by the page's content in the same stream (`EmbedStream`): reading ahead there would swallow the operators
// after the image, where poppler's decoder reads no further than it decodes.
//
// Both read and check the zlib header the same way and ignore the Adler-32 trailer. On a valid stream the
// bytes are the same. On a damaged one both stop at the errors both detect; where zlib checks more (a
// distance beyond the data, an over-subscribed or incomplete Huffman code) poppler's decoder goes on, so
// zlib's output is a prefix of poppler's.
//
// The functions below are for tests: they decode with either decoder and count the streams zlib inflated.
#pragma once
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Which inflater `sluice_pdf_flate_decode` uses.
typedef enum {
    SLUICE_PDF_FLATE_POPPLER = 0,  // poppler's own FlateStream (what `pdftotext` uses)
    SLUICE_PDF_FLATE_ZLIB = 1      // SluiceFlateStream
} SluicePDFFlateDecoder;

/// Decodes `length` bytes of a zlib (FlateDecode) stream through poppler's stream interface with `decoder`.
/// Returns the bytes (malloc, for the caller to free; never NULL unless out of memory) and their count in
/// `*decodedLength`. `byteAtATime` reads them one `getChar` at a time instead of in blocks.
unsigned char *sluice_pdf_flate_decode(
    const unsigned char *bytes, size_t length, SluicePDFFlateDecoder decoder, int byteAtATime,
    size_t *decodedLength);

/// How many streams this process has inflated with zlib (0 if `Stream::makeFilter` was not replaced).
long sluice_pdf_flate_streams_inflated(void);

#ifdef __cplusplus
}
#endif
