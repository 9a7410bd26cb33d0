#!/usr/bin/env python3
"""Writes the picture fixtures (pictures.docx, pictures.pptx, pictures.pdf): documents with text and three
pictures each: a 240x160 drawing (captioned), a 16x16 icon and a 480x3 rule (both under the minimum size).

Flat OpenDocument files (the pictures inline, base64) are written here with Python's standard library and
converted by LibreOffice headless (Debian's libreoffice 7.4): `scripts/make-picture-fixtures.py OUTDIR` (scripts/make-samples.sh runs it for Tests/SluiceExtractTests/Fixtures)."""
import base64, os, struct, subprocess, sys, tempfile, zlib

def png(width, height, pixel):
    rows = b"".join(b"\0" + b"".join(bytes(pixel(x, y)) for x in range(width)) for y in range(height))
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b""))

# A sun over the sea: a yellow disc on a blue sky above darker water.
def scene(x, y):
    if (x - 170) ** 2 + (y - 45) ** 2 < 25 ** 2: return (250, 210, 40)
    return (40, 90, 160) if y > 100 else (130, 190, 240)
drawing = png(240, 160, scene)
icon = png(16, 16, lambda x, y: (200, 30, 30) if abs(x - 8) + abs(y - 8) < 7 else (255, 255, 255))
rule = png(480, 3, lambda x, y: (90, 90, 90))

def frame(name, data, width_cm, height_cm, anchor="as-char"):
    return (f'<draw:frame draw:name="{name}" text:anchor-type="{anchor}" svg:width="{width_cm}cm" '
            f'svg:height="{height_cm}cm"><draw:image><office:binary-data>{base64.b64encode(data).decode()}'
            '</office:binary-data></draw:image></draw:frame>')

NS = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
      'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
      'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
      'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" '
      'xmlns:presentation="urn:oasis:names:tc:opendocument:xmlns:presentation:1.0" '
      'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" '
      'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" '
      'xmlns:xlink="http://www.w3.org/1999/xlink"')

text = f'''<?xml version="1.0" encoding="UTF-8"?>
<office:document {NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:body><office:text>
<text:h text:outline-level="1">Harbour notes</text:h>
<text:p>The tide tables for the harbour are printed each spring.</text:p>
<text:p>{frame("icon", icon, 0.4, 0.4)} Keep the ferry times at hand.</text:p>
<text:p>The evening view from the pier is the one most visitors remember.</text:p>
<text:p>{frame("sunset", drawing, 6, 4)}</text:p>
<text:p>{frame("rule", rule, 12, 0.1)}</text:p>
<text:h text:outline-level="1">Moorings</text:h>
<text:p>Moorings are let by the season at the harbour office.</text:p>
<text:p>A pontoon is kept free for visiting boats.</text:p>
</office:text></office:body></office:document>
'''

def frame_at(name, data, x, y, w, h):
    return (f'<draw:frame draw:name="{name}" svg:x="{x}cm" svg:y="{y}cm" svg:width="{w}cm" svg:height="{h}cm">'
            f'<draw:image><office:binary-data>{base64.b64encode(data).decode()}</office:binary-data></draw:image>'
            '</draw:frame>')

def box(words, y):
    return (f'<draw:frame svg:x="2cm" svg:y="{y}cm" svg:width="20cm" svg:height="2cm"><draw:text-box>'
            f'<text:p>{words}</text:p></draw:text-box></draw:frame>')

slides = f'''<?xml version="1.0" encoding="UTF-8"?>
<office:document {NS} office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.presentation">
<office:body><office:presentation>
<draw:page draw:name="one">{box("Harbour opening hours and the ferry timetable", 2)}{frame_at("icon", icon, 1, 1, 0.4, 0.4)}</draw:page>
<draw:page draw:name="two">{box("The view from the pier at dusk", 2)}{frame_at("sunset", drawing, 4, 5, 9, 6)}{frame_at("rule", rule, 2, 14, 20, 0.1)}</draw:page>
<draw:page draw:name="three">{box("Moorings are let by the season", 2)}</draw:page>
</office:presentation></office:body></office:document>
'''

out = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
with tempfile.TemporaryDirectory() as work:
    for name, body in (("pictures.fodt", text), ("pictures.fodp", slides)):
        with open(os.path.join(work, name), "w") as f: f.write(body)
    env = dict(os.environ, HOME=work)
    def convert(source, target):
        subprocess.run(["soffice", "--headless", "--convert-to", target, "--outdir", work,
                        os.path.join(work, source)], check=True, env=env, stdout=subprocess.DEVNULL)
    convert("pictures.fodt", "docx:MS Word 2007 XML")
    convert("pictures.fodt", "pdf")
    convert("pictures.fodp", "pptx:Impress MS PowerPoint 2007 XML")
    for name in ("pictures.docx", "pictures.pdf", "pictures.pptx"):
        os.replace(os.path.join(work, name), os.path.join(out, name))
