#!/usr/bin/env python3
"""Writes samples/pdf/pages-without-scans.pdf: pages that have (almost) no text layer and nothing to OCR,
beside one page of text and one page that is a (blank) scan. Called by scripts/make-samples.sh.

The PDF is written by hand (no library, byte-identical on every run), A4, five pages:
  1. a text layer of one sentence (Helvetica), so that the document has text;
  2. blank: an empty content stream;
  3. vector drawings only: lines, rectangles, a filled shape and a Bézier curve, no text, no image;
  4. a 16×16 px image placed at 24×24 pt (an icon: 0.1% of the page), nothing else;
  5. a 4×4 px light-gray image stretched over the whole page: a scan of an empty sheet.
Pages 2–4 have no image that could hold a scan; page 5 has one, which OCR reads as nothing.

Usage: make-pages-without-scans.py OUTPUT.pdf
"""
import sys

WIDTH, HEIGHT = 595, 842


def stream(content: bytes, extra: str = "") -> bytes:
    return b"<< /Length %d%s >>\nstream\n" % (len(content), extra.encode()) + content + b"\nendstream"


def hex_image(width: int, height: int, pixel) -> bytes:
    data = "".join("%02x" % pixel(x, y) for y in range(height) for x in range(width)) + ">"
    extra = " /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray" % (width, height)
    extra += " /BitsPerComponent 8 /Filter /ASCIIHexDecode"
    return stream(data.encode(), extra)


text = b"BT /F1 12 Tf 72 770 Td (This page has a text layer: one sentence, set in Helvetica.) Tj ET"
vector = (
    b"0.5 w 72 72 m 523 770 l S\n"
    b"1 w 100 100 200 150 re S\n"
    b"1 0 0 rg 300 400 150 100 re f\n"
    b"0 0 1 RG 2 w 100 600 m 150 700 250 700 300 600 c S\n"
    b"0 g 350 650 m 450 650 l 400 730 l h f"
)
icon = b"q 24 0 0 24 72 746 cm /Im1 Do Q"
scan = b"q %d 0 0 %d 0 0 cm /Im2 Do Q" % (WIDTH, HEIGHT)

objects = [
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R] /Count 5 >>",
]
resources = b"/Resources << /Font << /F1 13 0 R >> /XObject << /Im1 14 0 R /Im2 15 0 R >> >>"
for content_id in range(8, 13):
    objects.append(
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 %d %d] %s /Contents %d 0 R >>"
        % (WIDTH, HEIGHT, resources, content_id)
    )
for content in (text, b"", vector, icon, scan):
    objects.append(stream(content))
objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
objects.append(hex_image(16, 16, lambda x, y: 0 if (x // 4 + y // 4) % 2 else 255))
objects.append(hex_image(4, 4, lambda x, y: 0xE8))

out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
offsets = []
for number, body in enumerate(objects, start=1):
    offsets.append(len(out))
    out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
xref = len(out)
out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
for offset in offsets:
    out += b"%010d 00000 n \n" % offset
out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)

with open(sys.argv[1], "wb") as file:
    file.write(out)
