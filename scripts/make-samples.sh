#!/usr/bin/env bash
# Regenerates samples/ from Debian's documentation on this machine (samples/README.md lists every file).
#
# The outputs are committed: nothing here is needed to build or test Sluice. Running it needs
#   apt-get install -y enscript ghostscript qpdf poppler-utils openssl pandoc iso-codes distro-info-data groff img2pdf imagemagick python3-venv libjpeg62-turbo-dev
#   apt-get install -y --no-install-recommends libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui
# (and openpyxl from PyPI, installed into a throwaway virtual environment), and the packages whose /usr/share/doc files it copies (a missing one is reported by name).
# The generated files come out byte-identical on every run (fixed dates, fixed qpdf ID and AES IV,
# fixed-key pseudo-random bytes).
#
# Usage: scripts/make-samples.sh [--generated-only]
#   --generated-only   keep the copied text/markdown/pdf files, remake only the generated ones
#                      (pdf/xz-utils-faq.pdf, images/, bad/).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/samples"
doc=/usr/share/doc
generated_only=false
[[ "${1:-}" == "--generated-only" ]] && generated_only=true

for tool in enscript gs qpdf pdftoppm openssl pandoc python3 iconv groff img2pdf convert soffice; do
    command -v "$tool" >/dev/null || { echo "missing tool: $tool (see the header of $0)" >&2; exit 1; }
done

# Fixed dates so that ghostscript and enscript write the same bytes on every run.
export SOURCE_DATE_EPOCH=1700000000
export TZ=UTC LC_ALL=C

mkdir -p "$out"/{text,markdown,pdf,images,bad,docx,odt,rtf,html,json,csv}

# copy SRC DEST: copies a file from /usr/share/doc, decompressing *.gz.
copy() {
    local src="$doc/$1" dest="$out/$2"
    [[ -f "$src" ]] || { echo "missing source: $src (install the package that ships it)" >&2; exit 1; }
    case "$src" in
        *.gz) gzip -dc "$src" >"$dest" ;;
        *) cp "$src" "$dest" ;;
    esac
}

if ! $generated_only; then
    # Plain text: READMEs, FAQs, NEWS files, manuals and changelogs.
    copy xz-utils/faq.txt.gz                 text/xz-utils-faq.txt
    copy zlib1g-dev/FAQ.gz                   text/zlib-faq.txt
    copy zlib1g-dev/algorithm.txt.gz         text/zlib-algorithm.txt
    copy valgrind/FAQ.txt.gz                 text/valgrind-faq.txt
    copy base-passwd/users-and-groups.txt.gz text/base-passwd-users-and-groups.txt
    copy man-db/man-db-manual.txt.gz         text/man-db-manual.txt
    copy liblzma-dev/xz-file-format.txt.gz   text/xz-file-format.txt
    copy python3/python-policy.txt.gz        text/python-policy.txt
    copy sed/sedfaq.txt.gz                   text/sedfaq.txt
    copy sed/NEWS.gz                         text/sed-NEWS.txt
    copy gzip/NEWS.gz                        text/gzip-NEWS.txt
    copy less/NEWS.gz                        text/less-NEWS.txt
    copy grep/README                         text/grep-README.txt
    copy wget/README                         text/wget-README.txt
    copy bc/README                           text/bc-README.txt
    copy base-files/FAQ                      text/base-files-FAQ.txt
    copy jq/changelog.gz                     text/jq-changelog.txt
    copy grep/changelog.Debian.gz            text/grep-changelog.Debian.txt

    # Markdown.
    copy git/README.md                                      markdown/git-README.md
    copy zstd/README.md.gz                                  markdown/zstd-README.md
    copy apt/README.md.gz                                   markdown/apt-README.md
    copy man-db/README.md.gz                                markdown/man-db-README.md
    copy libxml2/README.md                                  markdown/libxml2-README.md
    copy tesseract-ocr/README.md.gz                         markdown/tesseract-README.md
    copy libxxhash-dev/xxhash_spec.md.gz                    markdown/xxhash-spec.md
    copy systemd/CODING_STYLE.md.gz                         markdown/systemd-CODING_STYLE.md
    copy systemd/ENVIRONMENT.md.gz                          markdown/systemd-ENVIRONMENT.md
    copy python3-pip/html/getting-started.md                markdown/pip-getting-started.md
    copy python3-pip/html/topics/dependency-resolution.md.gz markdown/pip-dependency-resolution.md
    copy nodejs/api/path.md                                 markdown/nodejs-path.md
    copy nodejs/contributing/writing-tests.md               markdown/nodejs-writing-tests.md
    copy openssl/NEWS.md.gz                                 markdown/openssl-NEWS.md

    # PDFs as Debian ships them (pdfTeX output, no Title in their info dictionary).
    copy fontconfig/fontconfig-user.pdf.gz          pdf/fontconfig-user.pdf
    copy shared-mime-info/shared-mime-info-spec.pdf pdf/shared-mime-info-spec.pdf

    # HTML, JSON and CSV as Debian ships them.
    copy enscript/FAQ.html                   html/enscript-FAQ.html
    copy base-passwd/users-and-groups.html   html/base-passwd-users-and-groups.html
    copy libjson-c5/README.html              html/json-c-README.html
    copy nodejs/api/path.html                html/nodejs-path.html
    copy nodejs/api/path.json.gz             json/nodejs-path.json
    cp /usr/share/iso-codes/json/iso_4217.json "$out/json/iso-4217-currencies.json"
    cp /usr/share/distro-info/debian.csv "$out/csv/debian-releases.csv"
fi

# DOCX made by pandoc from Markdown samples (headings, lists, a table; SOURCE_DATE_EPOCH fixes the dates).
pandoc --from gfm --to docx --metadata title="Zstandard README" --metadata author="Meta Platforms" \
    -o "$out/docx/zstd-README.docx" "$out/markdown/zstd-README.md"
pandoc --from gfm --to docx --metadata title="Dependency Resolution" \
    -o "$out/docx/pip-dependency-resolution.docx" "$out/markdown/pip-dependency-resolution.md"

# Numbered and nested lists, and a table with an empty cell, in a DOCX made by pandoc from Markdown
# written here (the steps are from the xz FAQ).
pandoc --from gfm --to docx -o "$out/docx/xz-lists.docx" <<'MD'
# Using xz

## Steps

1. Compress the file with xz.
2. Check the result:
    - run xz --list on it;
    - compare the sizes.
3. Remove the original.

## Formats

| Suffix | Format | Notes |
|--------|--------|-------|
| .xz | XZ | |
| .lzma | LZMA_Alone | legacy |
MD

# Footnotes, in a DOCX made by pandoc from Markdown written here (facts from the xz FAQ and man page); and
# the same notes as endnotes: the pandoc file with its footnotes part, references and relationship renamed
# (pandoc writes no endnotes). Test fixtures, not samples: they stay out of the default pipeline's run and
# of the retrieval benchmark's corpus.
fixtures="$root/Tests/SluiceExtractTests/Fixtures"
mkdir -p "$fixtures"
pandoc --from markdown --to docx -o "$fixtures/xz-footnotes.docx" <<'MD'
# Compressing with xz

The .xz format supports multiple filters[^filters] and integrity checks.
Decompression needs little memory compared to compression.[^memory]

## Integrity checks

CRC64 is the default check[^check] of the xz command line tool.

[^filters]: LZMA2 is the default filter; BCJ filters improve compression of executables.

[^memory]: The memory usage of decompression depends on the dictionary size used when compressing.

[^check]: Use --check=sha256 for a cryptographic hash.
MD
python3 - "$fixtures/xz-footnotes.docx" "$fixtures/xz-endnotes.docx" <<'PY'
import sys, zipfile
source, target = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(source) as z, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
    for info in z.infolist():
        data = z.read(info.filename)
        name = info.filename.replace("footnotes", "endnotes")
        if name.endswith(".xml") or name.endswith(".rels"):
            for old, new in [(b"footnotes", b"endnotes"), (b"footnoteReference", b"endnoteReference"),
                             (b"footnoteRef", b"endnoteRef"), (b"w:footnote", b"w:endnote")]:
                data = data.replace(old, new)
        copy = zipfile.ZipInfo(name, date_time=info.date_time)
        copy.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(copy, data)
PY

# A PowerPoint deck made by pandoc from Markdown written here (facts from the xz FAQ and man page): a title
# slide, bullets with speaker notes, a table, and slides listed in presentation.xml in another order than
# their part names (the deck's fourth part comes second). A test fixture, like the notes above.
pandoc --from markdown --to pptx -o "$fixtures/xz-slides.pptx" <<'MD'
---
title: XZ Utils in brief
author: Lasse Collin
---

# What XZ is

- A general-purpose data compression format
- The successor of LZMA Utils

::: notes
The letters XZ mean nothing: they come from the file suffix .xz.
:::

# Memory at each preset

| Preset | Compression | Decompression |
|--------|-------------|---------------|
| -0     | 3 MiB       | 1 MiB         |
| -9     | 674 MiB     | 65 MiB        |

# Integrity checks

CRC64 is the default check of the xz command line tool.
MD
python3 - "$fixtures/xz-slides.pptx" <<'PY'
import re, sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    parts = [(info, z.read(info.filename)) for info in z.infolist()]
with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
    for info, data in parts:
        if info.filename == "ppt/presentation.xml":
            # Move the last slide's entry to second place: the order is the list's, not the parts' names.
            ids = re.findall(rb'<p:sldId [^>]*/>', data)
            data = data.replace(b"".join(ids), b"".join([ids[0], ids[-1]] + ids[1:-1]))
        copy = zipfile.ZipInfo(info.filename, date_time=info.date_time)
        copy.compress_type = zipfile.ZIP_DEFLATED
        out.writestr(copy, data)
PY

# An EPUB made by pandoc from Markdown written here (facts from the xz FAQ and README): a title page and two
# chapters with a section, a numbered list and a table. A test fixture, like the notes above.
pandoc --from markdown --to epub3 --metadata identifier=urn:uuid:2f1c3a5e-4b7d-4e8a-9c21-5d6f7a8b9c0d \
  -o "$fixtures/xz-guide.epub" <<'MD'
---
title: XZ Utils, a short guide
author: Lasse Collin
lang: en
---

# Introduction

XZ Utils is free general-purpose data compression software with a high compression ratio.

## History

XZ Utils were written for POSIX-like systems, but also work on some not-so-POSIX systems.

# Using xz

1. Compress the file with xz.
2. Check the result with xz --list.

| Suffix | Format     |
|--------|------------|
| .xz    | XZ         |
| .lzma  | LZMA_Alone |
MD

# A Latin-1 HTML page with boilerplate to drop (script, style, nav, header, footer, aside), text from
# the xz FAQ and accented words that only decode right as Latin-1.
{
    printf '<!DOCTYPE html>\n<html><head><meta charset="iso-8859-1"><title>XZ Utils FAQ (Latin-1 copy)</title>\n'
    printf '<style>body { font-family: serif; } .hidden-style-text { }</style>\n'
    printf '<script>var trackingScriptText = "must not be indexed";</script></head>\n<body>\n'
    printf '<header>Site header boilerplate</header>\n<nav><a href="/">Home navigation link</a></nav>\n'
    printf '<h1>XZ Utils FAQ</h1>\n<p>Caf\xe9 na\xefve r\xe9sum\xe9: XZ Utils is free general-purpose data compression software.</p>\n'
    printf '<h2>Formats</h2>\n<ul><li>.xz is the native format</li><li>.lzma is the legacy format</li></ul>\n'
    printf '<table><tr><th>Tool</th><th>Purpose</th></tr><tr><td>xz</td><td>compress</td></tr><tr><td>unxz</td><td>decompress</td></tr></table>\n'
    printf '<p><img src="logo.png" alt="XZ Utils logo"></p>\n'
    printf '<aside>Sidebar advertisement</aside>\n<footer>Copyright footer boilerplate</footer>\n</body></html>\n'
} >"$out/html/xz-faq-latin1.html"

# JSON Lines: one ISO 639-2 language per line; a TSV of the same records; a CSV with quoted fields
# that hold commas and line breaks (package descriptions from the iso-codes and distro-info-data docs).
python3 - "$out" <<'PY'
import csv, json, sys
out = sys.argv[1]
languages = json.load(open("/usr/share/iso-codes/json/iso_639-2.json"))["639-2"]
with open(f"{out}/json/iso-639-2-languages.jsonl", "w") as f:
    for record in languages:
        f.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
with open(f"{out}/csv/iso-639-2-languages.tsv", "w", newline="") as f:
    writer = csv.writer(f, delimiter="\t", lineterminator="\n")
    writer.writerow(["alpha_3", "alpha_2", "name", "bibliographic"])
    for r in languages:
        writer.writerow([r.get("alpha_3", ""), r.get("alpha_2", ""), r.get("name", ""), r.get("bibliographic", "")])
with open(f"{out}/csv/packages.csv", "w", newline="") as f:
    writer = csv.writer(f, lineterminator="\r\n")
    writer.writerow(["package", "summary", "description"])
    writer.writerow(["iso-codes", "ISO language, territory, currency, script codes and their translations",
                     "This package provides the ISO 639, ISO 3166 and ISO 4217 lists,\n"
                     "with their translations, as \"JSON\" files."])
    writer.writerow(["distro-info-data", "information about the distributions' releases (data files)",
                     "Information about all releases of Debian and Ubuntu.\nThe distro-info script uses it."])
PY

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# A spreadsheet made by openpyxl (installed into a throwaway virtual environment): two sheets of facts from
# the xz man page and release history, with numbers, release dates (a date format), a boolean, an empty
# cell, a sparse row, a formula whose value openpyxl does not compute, and rich text in a shared string.
# A test fixture, like the notes and the deck above.
python3 -m venv "$work/xlsx-venv" >/dev/null
"$work/xlsx-venv/bin/pip" install -q openpyxl==3.1.5
"$work/xlsx-venv/bin/python" - "$fixtures/xz-facts.xlsx" <<'PY'
import datetime, re, sys, zipfile
from openpyxl import Workbook
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont

book = Workbook()
book.properties.title = "XZ Utils facts"
book.properties.creator = "Lasse Collin"
fixed = datetime.datetime(2023, 11, 14, 22, 13, 20)
book.properties.created = book.properties.modified = fixed
presets = book.active
presets.title = "Presets"
presets.append(["Preset", "Compression memory (MiB)", "Decompression memory (MiB)", "Notes"])
presets.append(["-0", 3, 1, CellRichText(["the ", TextBlock(InlineFont(b=True), "fastest"), " preset"])])
presets.append(["-6", 94, 9, "the default"])
presets.append(["-9", 674, 65, None])
presets["A6"] = "total"
presets["C6"] = "=SUM(C2:C4)"
releases = book.create_sheet("Releases")
releases.append(["Version", "Released", "Stable"])
for version, day in [("5.0.0", datetime.date(2010, 10, 23)), ("5.2.0", datetime.date(2014, 12, 21)),
                     ("5.4.0", datetime.date(2022, 12, 13))]:
    releases.append([version, day, True])
for row in releases.iter_rows(min_row=2, min_col=2, max_col=2):
    row[0].number_format = "yyyy-mm-dd"
book.save(sys.argv[1])
# Fixed timestamps inside the archive too, so that the file is the same on every run.
with zipfile.ZipFile(sys.argv[1]) as z:
    parts = [(info.filename, z.read(info.filename)) for info in z.infolist()]
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as out:
    for name, data in parts:
        if name == "docProps/core.xml":  # openpyxl stamps the time of saving
            data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2023-11-14T22:13:20Z", data)
        out.writestr(zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20)), data, zipfile.ZIP_DEFLATED)
PY


# OpenDocument and RTF, converted by LibreOffice (headless) from the DOCX, XLSX and PPTX above: the list
# sample as ODT and RTF (samples), the workbook and the deck as ODS and ODP, and a pandoc DOCX with a title,
# an author, a footnote and four scripts as ODT and RTF (test fixtures). LibreOffice stamps the time of
# conversion into ZIP entries: these files are the same in content, not in bytes, from run to run.
# convert FORMAT SOURCE FOLDER: soffice writes FOLDER/<source name>.FORMAT.
convert() {
    soffice --headless -env:UserInstallation="file://$work/lo-profile" --convert-to "$1" --outdir "$3" "$2" >/dev/null
}
convert odt "$out/docx/xz-lists.docx" "$out/odt"
convert rtf "$out/docx/xz-lists.docx" "$out/rtf"
convert ods "$fixtures/xz-facts.xlsx" "$fixtures"
convert odp "$fixtures/xz-slides.pptx" "$fixtures"
# A DOCX, a PPTX and a PDF with pictures above and under the captions' minimum size (picture captions).
python3 "$root/scripts/make-picture-fixtures.py" "$fixtures"
pandoc --from markdown --to docx -o "$work/xz-notes.docx" <<'MD'
---
title: XZ Utils notes
author: Lasse Collin
---

# Compressing with xz

The .xz format supports multiple filters[^filters] and integrity checks. Its authors write “naïve” café-style prose — with ‘quotes’ — and test in Ελληνικά, Русский and 日本語.

## Presets

1. Pick a preset from -0 to -9.
2. Add -e for the extreme variant.

[^filters]: LZMA2 is the default filter; BCJ filters improve compression of executables.
MD
convert odt "$work/xz-notes.docx" "$fixtures"
convert rtf "$work/xz-notes.docx" "$fixtures"

# ps_to_pdf PS PDF TITLE AUTHOR: ghostscript with a DOCINFO pdfmark so the PDF has a title and author.
ps_to_pdf() {
    printf '[ /Title (%s) /Author (%s) /DOCINFO pdfmark\n' "$3" "$4" >"$work/docinfo.ps"
    gs -q -dNOPAUSE -dBATCH -dSAFER -sDEVICE=pdfwrite -dCompatibilityLevel=1.5 \
        -sOutputFile="$2" "$1" "$work/docinfo.ps"
}

# A generated PDF with known metadata: the XZ Utils FAQ set in Courier by enscript, 4 pages.
enscript --quiet --no-header --font=Courier10 --margins=54:54:54:54 \
    --output="$work/xz-faq.ps" "$out/text/xz-utils-faq.txt"
ps_to_pdf "$work/xz-faq.ps" "$out/pdf/xz-utils-faq.pdf" "XZ Utils FAQ" "Lasse Collin"

# A PNG page of known text for OCR: the first lines of the same FAQ, Courier 10 pt, 300 dpi, grayscale,
# cropped to the text block. The source text is kept next to it.
sed -n '2,24p' "$out/text/xz-utils-faq.txt" >"$out/images/xz-faq-page.expected.txt"
enscript --quiet --no-header --font=Courier10 --margins=54:54:54:54 \
    --output="$work/ocr.ps" "$out/images/xz-faq-page.expected.txt"
ps_to_pdf "$work/ocr.ps" "$work/ocr.pdf" "OCR sample" "Lasse Collin"
# Letter page at 300 dpi is 2550x3300; the text block starts 0.75 inch (225 px) in from the top left.
pdftoppm -r 300 -gray -png -singlefile -f 1 -l 1 -x 150 -y 150 -W 2250 -H 1250 \
    "$work/ocr.pdf" "$out/images/xz-faq-page"

# A two-column PDF with a title and author: the first 120 lines of zlib's algorithm notes as groff -ms
# paragraphs (.2C), hyphenated by groff, with groff's running page-number headers.
{
    printf '.TL\nzlib: the compression algorithm\n.AU\nJean-loup Gailly and Mark Adler\n.2C\n.PP\n'
    awk 'NR<=120 { if ($0 ~ /^[ \t]*$/) { print ".PP" } else { sub(/^[ \t]+/, ""); if ($0 ~ /^[.\x27]/) $0 = "\\&" $0; print } }' \
        "$out/text/zlib-algorithm.txt"
} >"$work/twocol.ms"
groff -ms -Tps "$work/twocol.ms" >"$work/twocol.ps"
ps_to_pdf "$work/twocol.ps" "$out/pdf/zlib-two-column.pdf" "zlib: the compression algorithm" "Jean-loup Gailly and Mark Adler"

# Scans: the OCR page as an image-only PDF (img2pdf wraps the PNG losslessly, 300 dpi), as JPEG and as
# CCITT G4 TIFF; and a PDF whose first page has a text layer and whose second is that scan.
img2pdf --imgsize 300dpi --title "XZ Utils FAQ (scanned page)" --author "Lasse Collin" \
    --creationdate 2023-11-14T22:13:20 --moddate 2023-11-14T22:13:20 \
    -o "$out/pdf/xz-faq-scanned.pdf" "$out/images/xz-faq-page.png"
convert "$out/images/xz-faq-page.png" -strip -quality 60 "$out/images/xz-faq-page.jpg"
convert "$out/images/xz-faq-page.png" -strip -compress Group4 -density 300 "$out/images/xz-faq-page.tiff"
# The heading and first question of that page (2250×330 px) as BMP (1-bit), GIF and WebP: the other
# formats leptonica reads.
convert "$out/images/xz-faq-page.png" -crop 2250x330+0+0 +repage "$work/heading.png"
convert "$work/heading.png" -strip -type bilevel "$out/images/xz-faq-heading.bmp"
convert "$work/heading.png" -strip "$out/images/xz-faq-heading.gif"
convert "$work/heading.png" -strip -quality 80 "$out/images/xz-faq-heading.webp"
qpdf --static-id --empty --pages "$out/pdf/xz-utils-faq.pdf" 1 "$out/pdf/xz-faq-scanned.pdf" 1 -- \
    "$out/pdf/mixed-text-and-scan.pdf"
# Pages with nothing to OCR (blank, vector drawings, an icon) beside a text page and a blank scan, written
# by hand (no library): what OCR is skipped for (docs/EXTRACTORS.md, "Which pages are OCR'd").
python3 "$root/scripts/make-pages-without-scans.py" "$out/pdf/pages-without-scans.pdf"

# Deliberately bad inputs.
: >"$out/bad/zero-byte.txt"
{
    printf 'This file is mostly ordinary English text, but it is not valid UTF-8.\n'
    printf 'A lone continuation byte: \x80 here.\n'
    printf 'A Latin-1 e-acute where UTF-8 was expected: caf\xe9 au lait.\n'
    printf 'A truncated three-byte sequence: \xe2\x82 and then more text.\n'
    printf 'An overlong encoding of a slash: \xc0\xaf and bytes that never occur: \xfe\xff.\n'
    printf 'A UTF-16 surrogate encoded in UTF-8: \xed\xa0\x80 is not allowed either.\n'
    printf 'The last line ends in the middle of a character: \xf0\x9f\x98'
} >"$out/bad/invalid-utf8.txt"
# 4 KiB of pseudo-random bytes: AES-CTR keystream with a fixed key, so the file is reproducible.
head -c 4096 /dev/zero | openssl enc -aes-128-ctr -nosalt \
    -K 536c75696365536c75696365536c7569 -iv 00000000000000000000000000000000 >"$out/bad/binary.txt"
# Encrypted with a user password ("sluice"): cannot be opened without it.
# AES-128 rather than AES-256: its key derives from the password and the (static) ID, so it is reproducible.
qpdf --static-id --static-aes-iv --encrypt sluice sluice-owner 128 --use-aes=y -- \
    "$out/pdf/xz-utils-faq.pdf" "$out/bad/encrypted.pdf"
# A PNG named .pdf: sniffed by content and read as an image, not failed as a broken PDF.
cp "$out/images/xz-faq-page.png" "$out/bad/png-named.pdf"
# The first 2 KiB of a real PDF: header and part of the first object, no xref, no catalog.
head -c 2048 "$out/pdf/fontconfig-user.pdf" >"$out/bad/truncated.pdf"

# Bombs and other bad structured input, generated small.
python3 - "$out" <<'PY'
import sys, zipfile
out = sys.argv[1]
def docx(path, document_xml):
    # A minimal DOCX container: content types plus the one part that matters; fixed dates.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        def add(name, data):
            info = zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20))
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
        add("[Content_Types].xml", '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
        add("word/document.xml", document_xml)
W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
# Zip bomb: a 256 MiB document.xml of spaces (about 250 KB compressed: deflate's ratio tops out near 1030:1).
padding = b" " * (1 << 28)
docx(f"{out}/bad/zip-bomb.docx", b'<?xml version="1.0" encoding="UTF-8"?><w:document ' + W.encode() + b'><w:body><w:p><w:r><w:t>bomb</w:t></w:r></w:p>' + padding + b'</w:body></w:document>')
# Billion laughs: ten levels of ten references, 10^9 "lol"s if expanded.
entities = '<!ENTITY lol "lol">' + "".join(f'<!ENTITY lol{i} "{("&lol;" if i == 1 else f"&lol{i-1};") * 10}">' for i in range(1, 10))
docx(f"{out}/bad/entity-bomb.docx", f'<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE w:document [{entities}]><w:document {W}><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>')
# JSON nested 100,000 deep.
open(f"{out}/bad/deep.json", "w").write("[" * 100000 + "]" * 100000 + "\n")
# JSON Lines with a broken third line.
open(f"{out}/bad/bad-line.jsonl", "w").write('{"name": "first"}\n{"name": "second"}\n{"name": "third",, "oops": 1}\n{"name": "fourth"}\n')
PY

# The PowerPoint, Excel and EPUB samples (samples/pptx, samples/xlsx, samples/epub).
"$root/scripts/make-office-samples.sh" >/dev/null

echo "samples regenerated in $out:"
du -sh "$out"
