#!/usr/bin/env bash
# Makes the PowerPoint, Excel and EPUB samples (samples/pptx, samples/xlsx, samples/epub) from Debian's
# documentation and data on this machine; scripts/make-samples.sh runs it, and samples/README.md says what
# each file holds. The outputs are committed: nothing here is needed to build or test Sluice. Running it needs
#   apt-get install -y pandoc iso-codes systemd libjpeg62-turbo-dev python3-venv
# and openpyxl from PyPI (installed into a throwaway virtual environment). The files come out
# byte-identical on every run (SOURCE_DATE_EPOCH for pandoc, a fixed EPUB identifier, fixed dates for
# openpyxl's workbook properties and for every ZIP entry).
#
# Usage: scripts/make-office-samples.sh
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/samples"
doc=/usr/share/doc

for tool in pandoc python3; do
    command -v "$tool" >/dev/null || { echo "missing tool: $tool (see the header of $0)" >&2; exit 1; }
done
uids=$doc/systemd/UIDS-GIDS.md.gz
jpeg=$doc/libjpeg62-turbo-dev/README.md.gz
countries=/usr/share/iso-codes/json/iso_3166-1.json
for src in "$uids" "$jpeg" "$countries"; do
    [[ -f "$src" ]] || { echo "missing source: $src (install the package that ships it)" >&2; exit 1; }
done

export SOURCE_DATE_EPOCH=1700000000
export TZ=UTC LC_ALL=C.UTF-8
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"/{pptx,xlsx,epub}

# fixed_zip FILE: rewrites a ZIP with the same entries in the same order, each dated SOURCE_DATE_EPOCH (pandoc
# dates some entries with the time of the run); an EPUB's first entry, mimetype, stays stored uncompressed.
fixed_zip() {
    python3 - "$1" <<'PY'
import sys, zipfile
path = sys.argv[1]
with zipfile.ZipFile(path) as z:
    parts = [(info.filename, info.compress_type, z.read(info.filename)) for info in z.infolist()]
with zipfile.ZipFile(path, "w") as out:
    for name, compression, data in parts:
        out.writestr(zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20)), data, compression)
PY
}

# A deck made by pandoc from systemd's "Users, Groups, UIDs and GIDs on systemd Systems": the document's
# title on the title slide, a slide per section titled with the section's heading, the first sentence of each
# paragraph and list item as a bullet, the rest of it in the speaker notes, and the section's table and
# code blocks on the slide. All its text is systemd's; only the layout is the script's.
gzip -dc "$uids" | python3 -c '
import re, sys
text = sys.stdin.read()
text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # the web site front matter
title, _, body = text.partition("\n## ")
title = re.search(r"^# (.+)$", title, re.M).group(1), title.split("\n", 2)[-1]
sections = [("Overview", title[1])] + [(s.split("\n", 1)[0], s.split("\n", 1)[1]) for s in body.split("\n## ")]
sentence_end = re.compile(r"(?<=[.!?)])\s+(?=[A-Z(`])")

def blocks(text):
    """Paragraphs, list items, tables and code blocks, in order, as (kind, text)."""
    lines, out, i = text.strip("\n").split("\n"), [], 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif line.strip().startswith("```"):
            indent = len(line) - len(line.lstrip())
            j = i + 1
            while not lines[j].strip().startswith("```"):
                j += 1
            out.append(("code", "\n".join(l[indent:] for l in lines[i:j + 1])))
            i = j + 1
        elif line.startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out.append(("table", "\n".join(lines[i:j])))
            i = j
        else:
            item = re.match(r"\d+\. ", line)
            j = i + 1
            while j < len(lines) and lines[j].strip() and not re.match(r"\d+\. ", lines[j]) \
                    and not lines[j].strip().startswith("```"):
                j += 1
            words = " ".join(l.strip() for l in lines[i:j])
            out.append(("item" if item else "paragraph", words[item.end():] if item else words))
            i = j
    return out

print("---\ntitle: \"%s\"\nauthor: The systemd project\n---\n" % title[0])
for heading, text in sections:
    slide, notes = [], []
    for kind, block in blocks(text):
        if kind in ("code", "table"):
            slide.append(block)
            continue
        head = sentence_end.split(block, 1)
        slide.append("- " + head[0])
        notes += head[1:]
    print("# %s\n" % heading)
    for part in slide:  # bullets one per line; a table or a code block stands apart
        print(part if part.startswith("- ") else "\n" + part + "\n")
    print()
    if notes:
        print("::: notes\n" + "\n\n".join(notes) + "\n:::\n")
' >"$work/deck.md"
pandoc --from markdown --to pptx -o "$out/pptx/systemd-uids-gids.pptx" "$work/deck.md"
fixed_zip "$out/pptx/systemd-uids-gids.pptx"

# A short book made by pandoc from libjpeg-turbo's README: its level-1 headings are the chapters (Background,
# License, Building, Using libjpeg-turbo with its sections, Mathematical Compatibility, Performance Pitfalls
# with its sections), a chapter per XHTML file.
gzip -dc "$jpeg" >"$work/libjpeg-turbo.md"
pandoc --from markdown --to epub3 --metadata title="libjpeg-turbo README" \
    --metadata author="The libjpeg-turbo Project" --metadata lang=en --metadata date=2023-11-14 \
    --metadata identifier=urn:uuid:7d3f0b6e-2a41-4c58-9e0d-3b6a1f2c4d85 \
    -o "$out/epub/libjpeg-turbo-README.epub" "$work/libjpeg-turbo.md"
fixed_zip "$out/epub/libjpeg-turbo-README.epub"

# A workbook made by openpyxl: iso-codes' ISO 3166-1 countries, one sheet, a header row and a row per
# country (249), the codes as text (numeric codes keep their leading zeros), empty cells where a country has
# no official or common name.
python3 -m venv "$work/xlsx-venv" >/dev/null
"$work/xlsx-venv/bin/pip" install -q openpyxl==3.1.5
"$work/xlsx-venv/bin/python" - "$countries" "$out/xlsx/iso-3166-1-countries.xlsx" <<'PY'
import datetime, json, re, sys, zipfile
from openpyxl import Workbook

countries = json.load(open(sys.argv[1], encoding="utf-8"))["3166-1"]
book = Workbook()
book.properties.title = "ISO 3166-1 countries"
book.properties.creator = "Debian iso-codes"
fixed = datetime.datetime(2023, 11, 14, 22, 13, 20)
book.properties.created = book.properties.modified = fixed
sheet = book.active
sheet.title = "Countries"
columns = [("alpha_2", "Alpha-2 code"), ("alpha_3", "Alpha-3 code"), ("numeric", "Numeric code"),
           ("name", "Name"), ("official_name", "Official name"), ("common_name", "Common name")]
sheet.append([label for _, label in columns])
for country in countries:
    sheet.append([country.get(field) for field, _ in columns])
for cell in sheet["C"]:
    cell.number_format = "@"  # text: 004, not 4
book.save(sys.argv[2])
with zipfile.ZipFile(sys.argv[2]) as z:
    parts = [(info.filename, z.read(info.filename)) for info in z.infolist()]
with zipfile.ZipFile(sys.argv[2], "w", zipfile.ZIP_DEFLATED) as out:
    for name, data in parts:
        if name == "docProps/core.xml":  # openpyxl stamps the time of saving
            data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2023-11-14T22:13:20Z", data)
        out.writestr(zipfile.ZipInfo(name, date_time=(2023, 11, 14, 22, 13, 20)), data, zipfile.ZIP_DEFLATED)
PY

ls -l "$out"/pptx "$out"/xlsx "$out"/epub
