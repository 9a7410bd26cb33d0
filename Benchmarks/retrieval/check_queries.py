#!/usr/bin/env python3
"""Check Benchmarks/retrieval/queries.jsonl against the sample corpus (samples/).

Usage:  python3 Benchmarks/retrieval/check_queries.py [--queries FILE] [--samples DIR] [--ocr]
        python3 Benchmarks/retrieval/check_queries.py --heldout [--queries FILE] [--against FILE]
        python3 Benchmarks/retrieval/check_queries.py --heldout2 [--queries FILE]
        python3 Benchmarks/retrieval/check_queries.py --heldout3 [--queries FILE]
        python3 Benchmarks/retrieval/check_queries.py --heldout4 [--queries FILE]

Python 3 standard library only, plus the `pdftotext` command (poppler-utils). Exits 0 when every check
passes, 1 on any problem (each printed as `ERROR qNNN: ...`), 2 on bad usage.

What it checks
  * schema: one JSON object per line with exactly the fields id, query, kind, relevant, note (note may
    be left out); ids `q` + 3 digits, unique; kind one of KINDS; every relevant entry has `key`, `contains`
    and, for PDFs only, a 1-based `page` within the page count; at most one entry per document (per
    page for PDFs), so that a retrieved chunk can hit at most one entry and nDCG stays within 0..1;
  * keys: the file samples/<key> exists, is indexed by Pipelines/default.yaml (not under bad/, an
    included extension);
  * phrases: `contains` is 10-80 characters, one line, and occurs in the extracted text of its document
    (of its page for PDFs), whitespace-normalized (runs of whitespace count as one space, both sides);
  * completeness: a phrase that also occurs in a document or PDF page that the query does not list is an
    error (a copy nobody listed would be scored as a miss when a system finds it);
  * the mix: totals per kind (MIX below), and that each kind's answers come from matching sources
    (pdf-page: a PDF page; scan: OCR'd text; table-row: a CSV/TSV/XLSX; json-record: JSON/JSONL);
  * with --heldout (the held-out set, heldout.jsonl by default): the mix is HELDOUT_MIX (every kind, at
    least HELDOUT_MIN_TOTAL queries), and the set is disjoint from the tuning set (--against,
    queries.jsonl): no id, query text or (document, phrase) pair of that set appears again;
  * with --heldout2 (the third set, heldout2.jsonl, written blind): ids q3NN, the mix HELDOUT2_MIX (at
    least HELDOUT2_MIN_TOTAL queries), and disjoint from both earlier sets (queries.jsonl, heldout.jsonl) in
    ids and query texts and, more strictly than --heldout, in passages: a phrase whose place in its document
    overlaps a phrase judged there by an earlier set, or that lies in the same table row or JSON record
    (a CSV/TSV/XLSX row, a JSON Lines line, a JSON object of an array), is a repeat; and each phrase occurs
    once in its document (page), so that it names one passage. The heading-only image crops are left out of
    its coverage rule: all they show (the title and the first question) is judged already (q079, q156);
  * with --heldout3 (the fourth set, heldout3.jsonl, written blind, issue 31, 2026-11-30): the rules of
    --heldout2, with ids q4NN, the mix HELDOUT3_MIX (at least HELDOUT3_MIN_TOTAL queries), and no passage,
    id or query text of any of the three earlier sets (queries.jsonl, heldout.jsonl, heldout2.jsonl);
  * with --heldout4 (the fifth set, heldout4.jsonl, written blind, issue 31, 2026-11-30, session 33): the rules
    of --heldout3, with ids q5NN, the mix HELDOUT4_MIX (at least HELDOUT4_MIN_TOTAL queries), and no passage,
    id or query text of any of the four earlier sets;
  * coverage: every format the samples hold (the extension of an indexed file) is judged by at least
    FORMAT_MIN queries of the set; a new kind of sample needs its queries;
  * natural queries do not copy their answer: the query is not a substring of any listed passage's
    document text.

How the text of each format is obtained (as close to Sluice's extractors, docs/EXTRACTORS.md, as the
standard library allows; phrases are chosen so that they do not depend on the differences):
  * .txt: the file (UTF-8).
  * .md: the file; a phrase must not contain Markdown markup (` * [ ] < > |), which the extractor may drop.
  * .html/.htm: the text of the page decoded with its declared charset (Latin-1 as windows-1252), entities
    decoded, without script/style/noscript/template/nav/aside/header/footer; block elements separate words.
  * .docx: word/document.xml, the w:t runs of each paragraph joined, paragraphs and table cells separated.
  * .odt: content.xml's body, each text:p / text:h a line. .rtf: the text outside skipped destinations
    (font and colour tables, style sheet, info, pictures, {\\*...} groups), \\'hh as cp1252, \\uN decoded.
  * .pptx: each slide's and speaker-notes page's a:p paragraphs, a line each. .xlsx: each sheet's rows
    after the first as `name: value; ...` (the first row's values as names), shared strings resolved.
    .epub: the book's XHTML files, each read as an HTML page.
  * .json: one line per string value, `$.path: value` (Sluice indexes string values only, not keys or
    numbers). .jsonl: the same per line.
  * .csv/.tsv: one line per row, `name: value; ...` with the header's names, empty values left out,
    line breaks inside quoted values as spaces.
  * .pdf: `pdftotext -layout` AND `pdftotext` (poppler's reading order, which Sluice uses, with hyphens
    joined); the page is the text between form feeds. The phrase must occur in both, so it is safe from
    column interleaving (zlib-two-column.pdf) and from hyphenation at line ends.
  * OCR'd text: the generator (scripts/make-samples.sh) renders samples/images/xz-faq-page.expected.txt
    (lines 2-24 of text/xz-utils-faq.txt), so that file is the text of images/xz-faq-page.{png,jpg,tiff},
    of pdf/xz-faq-scanned.pdf page 1 and of pdf/mixed-text-and-scan.pdf page 2 (those pages have no text
    layer; checked). images/xz-faq-heading.{bmp,gif,webp} are the top 330 px of the PNG: the expected text
    up to and including the first question line.
    With --ocr, the images are also run through `tesseract` (if installed; about a CPU-second each) and
    a phrase missing from the real OCR output is reported as a WARNING (not an error: OCR output varies
    with the Tesseract version).
"""

import argparse
import collections
import csv
import html.parser
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile

KINDS = ("natural", "exact", "pdf-page", "scan", "table-row", "json-record", "heading")
# Minimum number of queries per kind (and overall); natural was "about 25" of 73 and stays under 40 % of the
# set as formats join (30 of 81; 35 of 96 with the PPTX, XLSX and EPUB samples).
# Every kind but scans has at least 12 queries in each set (issue 31, 2026-11-29), so that one query does not
# decide a kind's verdict; the OCR'd page holds too few facts for 12 scan queries.
MIX = {"natural": 22, "exact": 12, "pdf-page": 12, "scan": 3, "table-row": 12, "json-record": 12, "heading": 12}
MAX_NATURAL = 36
MIN_TOTAL = 60
MIN_PHRASE, MAX_PHRASE = 10, 80
# The held-out set (heldout.jsonl): smaller, but every kind, so a rule chosen on queries.jsonl is judged on
# queries it was not fitted to.
HELDOUT_MIX = {"natural": 12, "exact": 8, "pdf-page": 12, "scan": 3, "table-row": 12, "json-record": 12,
               "heading": 12}
HELDOUT_MIN_TOTAL = 40
# The third set (heldout2.jsonl, issue 31, 2026-11-30), written blind to be scored once: weighted towards the
# kinds whose verdicts were decided by one query of 12 (records, pages, rows), about 80 queries.
HELDOUT2_MIX = {"natural": 12, "exact": 8, "pdf-page": 16, "scan": 2, "table-row": 16, "json-record": 16,
                "heading": 8}
HELDOUT2_MIN_TOTAL = 76
HELDOUT2_ID = r"q3\d\d"
# The fourth set (heldout3.jsonl, issue 31, 2026-11-30, session 33), written blind to be scored once: weighted
# to the kinds that decide the bar (rows, records, natural questions at least 18 each); scans optional (the
# OCR'd page is nearly all judged by the earlier sets).
HELDOUT3_MIX = {"natural": 18, "exact": 8, "pdf-page": 12, "scan": 0, "table-row": 18, "json-record": 18,
                "heading": 6}
HELDOUT3_MIN_TOTAL = 86
HELDOUT3_ID = r"q4\d\d"
# The fifth set (heldout4.jsonl, issue 31, 2026-11-30, session 33), written blind to be scored once after the
# fusion's parameters are chosen on the first four: weighted to the kinds where main's default lost on the fourth
# set (natural questions, PDF pages, exact codes, headings), plus rows and records.
HELDOUT4_MIX = {"natural": 18, "exact": 12, "pdf-page": 14, "scan": 0, "table-row": 10, "json-record": 10,
                "heading": 12}
HELDOUT4_MIN_TOTAL = 86
HELDOUT4_ID = r"q5\d\d"
# Formats heldout3.jsonl need not judge: those of HELDOUT2_UNCOVERED, and .csv: the rows of the two CSV files that
# no set judges (Buzz, Bo, Forky, Sid, Experimental) hold no value of 10 characters or more that is not also in a
# judged row, in another of these rows, or in other documents, so the strict passage rules leave nothing to judge.
HELDOUT3_UNCOVERED = {"bmp", "gif", "webp", "csv"}
# Formats heldout4.jsonl need not judge: those of HELDOUT3_UNCOVERED, and the full-page images: every sentence of the
# OCR'd page is judged by the earlier sets (q491 took the last), so no scan query is left to write.
HELDOUT4_UNCOVERED = HELDOUT3_UNCOVERED | {"png", "jpg", "tiff"}
# Formats heldout2.jsonl and heldout3.jsonl need not judge: the heading crops show only passages the earlier sets judged.
HELDOUT2_UNCOVERED = {"bmp", "gif", "webp"}
# Queries (in each set) that must judge a document of every format the samples hold (by extension).
FORMAT_MIN = 1

INCLUDED_EXT = {".txt", ".md", ".markdown", ".rst", ".text", ".docx", ".html", ".htm", ".json", ".jsonl",
                ".ndjson", ".csv", ".tsv", ".pdf", ".odt", ".rtf", ".pptx", ".xlsx", ".epub", ".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif",
                ".webp"}
IMAGE_EXT = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp", ".gif", ".webp"}

OCR_TEXT = "images/xz-faq-page.expected.txt"
# Documents (key, page) whose text is OCR'd from a rendering of OCR_TEXT.
OCR_PAGES = {("pdf/xz-faq-scanned.pdf", 1), ("pdf/mixed-text-and-scan.pdf", 2)}
OCR_FULL_IMAGES = {"images/xz-faq-page.png", "images/xz-faq-page.jpg", "images/xz-faq-page.tiff"}
OCR_HEADING_IMAGES = {"images/xz-faq-heading.bmp", "images/xz-faq-heading.gif", "images/xz-faq-heading.webp"}
MARKDOWN_MARKUP = set("`*[]<>|")


def norm(text):
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------- extraction

class _HTMLText(html.parser.HTMLParser):
    DROP = {"script", "style", "noscript", "template", "nav", "aside", "header", "footer", "svg", "iframe"}
    BLOCK = {"p", "div", "br", "li", "ul", "ol", "table", "tr", "td", "th", "h1", "h2", "h3", "h4", "h5",
             "h6", "pre", "dd", "dt", "dl", "blockquote", "section", "article", "main", "body", "title",
             "hr", "caption", "thead", "tbody", "figure", "figcaption", "head"}
    VOID = {"br", "hr", "img", "meta", "link", "input", "area", "base", "col", "embed", "source", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.drop = [], []

    def handle_starttag(self, tag, attrs):
        if tag in self.DROP:
            self.drop.append(tag)
        if tag in self.BLOCK:
            self.parts.append("\n")
        if tag == "img" and not self.drop:
            alt = dict(attrs).get("alt")
            if alt:
                self.parts.append(" [image: %s] " % alt)

    def handle_endtag(self, tag):
        if self.drop and tag == self.drop[-1]:
            self.drop.pop()
        if tag in self.BLOCK:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self.drop:
            self.parts.append(data)


def html_text(raw):
    head = raw[:4096].decode("ascii", "replace")
    m = re.search(r"""charset\s*=\s*["']?([A-Za-z0-9_-]+)""", head, re.I)
    charset = (m.group(1).lower() if m else "utf-8")
    if charset in ("iso-8859-1", "latin1", "latin-1", "us-ascii", "ascii"):
        charset = "cp1252"
    try:
        text = raw.decode(charset)
    except (UnicodeDecodeError, LookupError):
        text = raw.decode("cp1252", "replace")
    p = _HTMLText()
    p.feed(text)
    p.close()
    return "".join(p.parts)


def docx_text(path):
    xml = zipfile.ZipFile(path).read("word/document.xml").decode("utf-8")
    out = []
    for para in re.findall(r"<w:p[ >].*?</w:p>|<w:p/>", xml, re.S):
        para = re.sub(r"<w:tab/>|<w:tab />", " ", para)
        para = re.sub(r"<w:br/>|<w:br />", "\n", para)
        runs = re.findall(r"<w:t(?: [^>]*)?>(.*?)</w:t>", para, re.S)
        out.append(html.unescape("".join(runs)))
    return "\n".join(out)


def odt_text(path):
    xml = zipfile.ZipFile(path).read("content.xml").decode("utf-8")
    body = xml.split("<office:body>", 1)[-1]
    out = []
    for para in re.findall(r"<text:(?:p|h)(?: [^>]*)?>.*?</text:(?:p|h)>", body, re.S):
        para = re.sub(r"<text:tab/>|<text:s(?: [^>]*)?/>", " ", para)
        para = re.sub(r"<text:line-break/>", "\n", para)
        out.append(html.unescape(re.sub(r"<[^>]+>", "", para)))
    return "\n".join(out)


RTF_SKIPPED = {"fonttbl", "colortbl", "stylesheet", "info", "pict", "object", "header", "footer", "fldinst",
               "listtable", "listoverridetable", "rsidtbl", "generator", "xmlnstbl", "themedata", "datastore"}


def rtf_text(path):
    """The text of an RTF file: groups, control words and skipped destinations dropped; \\'hh as cp1252,
    \\uN with its \\ucN fallback characters skipped."""
    data = open(path, "rb").read().decode("latin-1")
    out, stack, skip, uc, pending = [], [], False, 1, 0
    token = re.compile(r"\\([a-zA-Z]+)(-?\d+)? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+", re.S)
    for m in token.finditer(data):
        word, arg, hexa, sym, brace, text = m.groups()
        if brace == "{":
            stack.append((skip, uc))
        elif brace == "}":
            skip, uc = stack.pop() if stack else (skip, uc)
        elif sym == "*":
            skip = True
        elif word:
            if word in RTF_SKIPPED:
                skip = True
            elif word == "uc":
                uc = int(arg or 1)
            elif word == "u" and not skip:
                out.append(chr(int(arg) % 65536))
                pending = uc
                continue
            elif word in ("par", "line", "row") and not skip:
                out.append("\n")
            elif word in ("tab", "cell") and not skip:
                out.append(" ")
        elif hexa:
            if pending:
                pending -= 1
                continue
            if not skip:
                out.append(bytes([int(hexa, 16)]).decode("cp1252", "replace"))
        elif sym and not skip and sym in "\\{}":
            out.append(sym)
        elif text and not skip:
            if pending:
                n = min(pending, len(text))
                text, pending = text[n:], pending - n
            out.append(text)
        pending = 0 if not hexa else pending
    return "".join(out)


def pptx_text(path):
    """Every slide's and speaker-notes page's text, a line per a:p paragraph (runs joined)."""
    z = zipfile.ZipFile(path)
    out = []
    for name in sorted(n for n in z.namelist() if re.match(r"ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml$", n)):
        xml = z.read(name).decode("utf-8")
        for para in re.findall(r"<a:p>.*?</a:p>|<a:p [^>]*>.*?</a:p>", xml, re.S):
            para = re.sub(r"<a:br/>", "\n", para)
            out.append(html.unescape("".join(re.findall(r"<a:t>(.*?)</a:t>", para, re.S))))
    return "\n".join(out)


def xlsx_text(path):
    """Each sheet's rows after the first, `name: value; ...` with the first row's values as names (empty
    cells left out), as the table formats; shared and inline strings resolved, numbers as written."""
    z = zipfile.ZipFile(path)
    strings = []
    if "xl/sharedStrings.xml" in z.namelist():
        for si in re.findall(r"<si>(.*?)</si>", z.read("xl/sharedStrings.xml").decode("utf-8"), re.S):
            strings.append(html.unescape("".join(re.findall(r"<t(?: [^>]*)?>(.*?)</t>", si, re.S))))
    lines = []
    for name in sorted(n for n in z.namelist() if re.match(r"xl/worksheets/sheet\d+\.xml$", n)):
        xml = z.read(name).decode("utf-8")
        header = None
        for row in re.findall(r"<row [^>]*>(.*?)</row>", xml, re.S):
            cells = {}
            for ref, attrs, body in re.findall(r'<c r="([A-Z]+)\d+"([^>]*)>(.*?)</c>', row, re.S):
                value = re.search(r"<v>(.*?)</v>", body, re.S)
                inline = re.findall(r"<t(?: [^>]*)?>(.*?)</t>", body, re.S)
                if 't="s"' in attrs and value:
                    cells[ref] = strings[int(value.group(1))]
                elif inline:
                    cells[ref] = html.unescape("".join(inline))
                elif value:
                    cells[ref] = html.unescape(value.group(1))
            if header is None:
                header = cells
                continue
            lines.append("; ".join("%s: %s" % (header.get(ref, ref), v) for ref, v in cells.items() if v))
    return "\n".join(lines)


def epub_text(path):
    """The XHTML content documents of the book, read as HTML pages, in the order of their names."""
    z = zipfile.ZipFile(path)
    return "\n".join(html_text(z.read(n)) for n in sorted(z.namelist()) if n.endswith((".xhtml", ".html")))


def json_lines(value, path="$"):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from json_lines(v, "%s.%s" % (path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from json_lines(v, "%s[%d]" % (path, i))
    elif isinstance(value, str):
        yield "%s: %s" % (path, value)


def table_text(path, delimiter):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f, delimiter=delimiter))
    header, lines = rows[0], []
    for row in rows[1:]:
        cells = ["%s: %s" % (name, re.sub(r"\r?\n", " ", value)) for name, value in zip(header, row) if value]
        lines.append("; ".join(cells))
    return "\n".join(lines)


def pdf_pages(path, layout):
    cmd = ["pdftotext"] + (["-layout"] if layout else []) + [path, "-"]
    out = subprocess.run(cmd, check=True, capture_output=True).stdout.decode("utf-8", "replace")
    pages = out.split("\f")
    if pages and pages[-1].strip() == "":
        pages = pages[:-1]
    return pages


class Corpus:
    """Extracted text per document: texts[(key, page)] = [variant, ...], whitespace-normalized.
    page is None except for PDFs. A phrase must occur in every variant."""

    def __init__(self, samples):
        self.samples = samples
        self.texts = {}
        self.records = {}  # key -> [record text, ...] for tables (rows) and JSON (records), normalized
        self.pages = {}
        self.problems = []
        with open(os.path.join(samples, OCR_TEXT), encoding="utf-8") as f:
            self.ocr_text = f.read()
        lines = self.ocr_text.splitlines()
        first_q = next(i for i, line in enumerate(lines) if line.startswith("Q:"))
        self.heading_text = "\n".join(lines[:first_q + 1])
        for key in sorted(self.indexed_keys()):
            try:
                self.load(key)
            except Exception as e:  # noqa: BLE001 - report and go on
                self.problems.append("cannot extract %s: %s" % (key, e))

    def indexed_keys(self):
        for root, dirs, files in os.walk(self.samples):
            rel = os.path.relpath(root, self.samples)
            if rel.split(os.sep)[0] in ("bad", ".git", ".sluice"):
                dirs[:] = []
                continue
            for name in files:
                key = os.path.normpath(os.path.join(rel, name)).replace(os.sep, "/")
                if os.path.splitext(name)[1].lower() in INCLUDED_EXT:
                    yield key

    def load(self, key):
        path = os.path.join(self.samples, key)
        ext = os.path.splitext(key)[1].lower()
        put = lambda page, *variants: self.texts.__setitem__((key, page), [norm(v) for v in variants])
        if key in OCR_FULL_IMAGES or key == OCR_TEXT:
            put(None, self.ocr_text)
        elif key in OCR_HEADING_IMAGES:
            put(None, self.heading_text)
        elif ext in IMAGE_EXT:
            self.problems.append("image %s has no known text: add it to check_queries.py" % key)
        elif ext == ".pdf":
            layout, flow = pdf_pages(path, True), pdf_pages(path, False)
            if len(layout) != len(flow):
                self.problems.append("%s: pdftotext page counts differ (%d, %d)" % (key, len(layout), len(flow)))
            self.pages[key] = len(layout)
            for i, (a, b) in enumerate(zip(layout, flow), start=1):
                if (key, i) in OCR_PAGES:
                    if len(norm(a)) > 20:
                        self.problems.append("%s page %d should be image-only but has a text layer" % (key, i))
                    put(i, self.ocr_text)
                else:
                    put(i, a, b)
        elif ext in (".html", ".htm"):
            with open(path, "rb") as f:
                put(None, html_text(f.read()))
        elif ext == ".docx":
            put(None, docx_text(path))
        elif ext == ".odt":
            put(None, odt_text(path))
        elif ext == ".rtf":
            put(None, rtf_text(path))
        elif ext == ".pptx":
            put(None, pptx_text(path))
        elif ext == ".xlsx":
            text = xlsx_text(path)
            put(None, text)
            self.records[key] = [norm(line) for line in text.split("\n")]
        elif ext == ".epub":
            put(None, epub_text(path))
        elif ext == ".json":
            with open(path, encoding="utf-8") as f:
                lines = list(json_lines(json.load(f)))
            put(None, "\n".join(lines))
            # A record: the values under one element of an array (the path up to its last index).
            records = collections.OrderedDict()
            for line in lines:
                path_, _ = line.split(": ", 1)
                cut = path_.rfind("]")
                records.setdefault(path_[:cut + 1] if cut >= 0 else path_, []).append(line)
            self.records[key] = [norm("\n".join(v)) for v in records.values()]
        elif ext in (".jsonl", ".ndjson"):
            with open(path, encoding="utf-8") as f:
                records = ["\n".join(json_lines(json.loads(line))) for line in f if line.strip()]
            put(None, "\n".join(records))
            self.records[key] = [norm(r) for r in records]
        elif ext in (".csv", ".tsv"):
            text = table_text(path, "\t" if ext == ".tsv" else ",")
            put(None, text)
            self.records[key] = [norm(line) for line in text.split("\n")]
        else:
            with open(path, encoding="utf-8") as f:
                put(None, f.read())

    def spans(self, doc, phrase):
        """Where the phrase occurs in the document's (first) text: [(start, end), ...]."""
        text, p = self.texts.get(doc, [""])[0], norm(phrase)
        out, at = [], text.find(p) if p else -1
        while at >= 0:
            out.append((at, at + len(p)))
            at = text.find(p, at + 1)
        return out

    def record_numbers(self, key, phrase):
        """The numbers of the table rows or JSON records of `key` holding the phrase (empty for prose)."""
        p = norm(phrase)
        return {i for i, r in enumerate(self.records.get(key, [])) if p and p in r}

    def find(self, phrase):
        """Every (key, page) whose text contains the phrase in all variants."""
        p = norm(phrase)
        return {doc for doc, variants in self.texts.items() if all(p in v for v in variants)}


# ---------------------------------------------------------------- checks

def is_ocr(key, page):
    return (key, page) in OCR_PAGES or key in OCR_FULL_IMAGES or key in OCR_HEADING_IMAGES


def source_kind(key):
    return os.path.splitext(key)[1].lower().lstrip(".")


def load_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def check(queries_path, samples, run_ocr, against=None, third=False, fourth=False, fifth=False):
    """Checks `queries_path`; with `against` (the earlier sets' paths) as a held-out set, with `third` as
    heldout2.jsonl (its ids, mix and the stricter passage rules), with `fourth` too as heldout3.jsonl (its
    own ids and mix, the same strict rules), with `fifth` too as heldout4.jsonl."""
    id_pattern, id_name = ((HELDOUT4_ID, "q5NN") if fifth else (HELDOUT3_ID, "q4NN") if fourth
                           else (HELDOUT2_ID, "q3NN"))
    errors, warnings = [], []
    corpus = Corpus(samples)
    errors += ["corpus: " + p for p in corpus.problems]

    queries = []
    with open(queries_path, encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                errors.append("line %d: empty line" % n)
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                errors.append("line %d: not JSON: %s" % (n, e))
                continue
            if not isinstance(q, dict):
                errors.append("line %d: not a JSON object" % n)
                continue
            queries.append((n, q))

    seen_ids, seen_queries = set(), set()
    kinds = collections.Counter()
    sources = collections.Counter()
    entries = 0
    for n, q in queries:
        qid = q.get("id") if isinstance(q.get("id"), str) else "line %d" % n
        err = lambda msg: errors.append("%s: %s" % (qid, msg))
        extra = set(q) - {"id", "query", "kind", "relevant", "note"}
        if extra:
            err("unknown fields %s" % sorted(extra))
        if not re.fullmatch(id_pattern if third else r"q\d{3}", str(q.get("id", ""))):
            err("id must be " + id_name if third else "id must be q followed by 3 digits")
        if qid in seen_ids:
            err("duplicate id")
        seen_ids.add(qid)
        text = q.get("query")
        if not isinstance(text, str) or not text.strip():
            err("query must be a non-empty string")
            text = ""
        elif norm(text).lower() in seen_queries:
            err("duplicate query text")
        seen_queries.add(norm(text).lower())
        kind = q.get("kind")
        if kind not in KINDS:
            err("kind must be one of %s" % ", ".join(KINDS))
        kinds[kind] += 1
        if "note" in q and (not isinstance(q["note"], str) or not q["note"].strip()):
            err("note must be a non-empty string")
        rel = q.get("relevant")
        if not isinstance(rel, list) or not rel:
            err("relevant must be a non-empty list")
            continue
        listed, phrases, seen_entries = set(), set(), set()
        for i, r in enumerate(rel):
            where = "relevant[%d]" % i
            if not isinstance(r, dict):
                err("%s is not an object" % where)
                continue
            extra = set(r) - {"key", "page", "contains"}
            if extra:
                err("%s: unknown fields %s" % (where, sorted(extra)))
            key, page, phrase = r.get("key"), r.get("page"), r.get("contains")
            if not isinstance(key, str) or not key:
                err("%s: key must be a non-empty string" % where)
                continue
            where += " (%s%s)" % (key, "" if page is None else " p%s" % page)
            entries += 1
            path = os.path.join(samples, key)
            if not os.path.isfile(path):
                err("%s: no such file samples/%s" % (where, key))
                continue
            if key.startswith("bad/") or os.path.splitext(key)[1].lower() not in INCLUDED_EXT:
                err("%s: not indexed by the default pipeline" % where)
                continue
            is_pdf = key.lower().endswith(".pdf")
            if is_pdf:
                if not isinstance(page, int) or isinstance(page, bool) or page < 1:
                    err("%s: a PDF entry needs a 1-based integer page" % where)
                    continue
                if page > corpus.pages.get(key, 0):
                    err("%s: the PDF has %d pages" % (where, corpus.pages.get(key, 0)))
                    continue
            elif "page" in r:
                err("%s: page is only for PDFs" % where)
                continue
            doc = (key, page if is_pdf else None)
            if not isinstance(phrase, str):
                err("%s: contains must be a string" % where)
                continue
            if doc in seen_entries:
                err("%s: one entry per document (per page for PDFs), so that gains stay binary" % where)
            seen_entries.add(doc)
            listed.add(doc)
            phrases.add(phrase)
            if not (MIN_PHRASE <= len(phrase) <= MAX_PHRASE):
                err("%s: contains has %d characters (%d-%d)" % (where, len(phrase), MIN_PHRASE, MAX_PHRASE))
            if "\n" in phrase or "\r" in phrase or phrase != phrase.strip():
                err("%s: contains must be one line without leading/trailing spaces" % where)
            if key.endswith((".md", ".markdown")) and MARKDOWN_MARKUP & set(phrase):
                err("%s: contains has Markdown markup %s" % (where, sorted(MARKDOWN_MARKUP & set(phrase))))
            if doc not in corpus.texts:
                err("%s: no extracted text" % where)
                continue
            variants = corpus.texts[doc]
            if not all(norm(phrase) in v for v in variants):
                missing = "" if len(variants) == 1 else " (in %d of %d pdftotext modes)" % (
                    sum(norm(phrase) in v for v in variants), len(variants))
                err("%s: phrase %r not in the extracted text%s" % (where, phrase, missing))
                if is_pdf:
                    other = sorted(p for k, p in corpus.find(phrase) if k == key)
                    if other:
                        err("%s: the phrase is on page(s) %s" % (where, other))
            if third and len(corpus.spans(doc, phrase)) > 1:
                err("%s: phrase %r occurs %d times in the document: it does not name one passage" % (
                    where, phrase, len(corpus.spans(doc, phrase))))
            if kind == "natural" and text and norm(text).lower().rstrip("?") in variants[0].lower():
                err("natural query occurs verbatim in %s" % key)
            sources["ocr" if is_ocr(*doc) else source_kind(key)] += 1
        # Every place a listed phrase occurs must be listed (copies, other pages).
        for phrase in phrases:
            for doc in sorted(corpus.find(phrase) - listed, key=str):
                err("phrase %r also occurs in %s%s, which is not listed" % (
                    phrase, doc[0], "" if doc[1] is None else " page %d" % doc[1]))
        # The kind matches where the answers are.
        docs = [(r.get("key"), r.get("page")) for r in rel if isinstance(r, dict) and isinstance(r.get("key"), str)]
        need = {"pdf-page": lambda k, p: k.endswith(".pdf") and not is_ocr(k, p),
                "scan": is_ocr,
                "table-row": lambda k, p: k.endswith((".csv", ".tsv", ".xlsx")),
                "json-record": lambda k, p: k.endswith((".json", ".jsonl", ".ndjson"))}.get(kind)
        if need and not any(need(k, p) for k, p in docs):
            err("kind %s but no relevant entry is of that source" % kind)

    total = len(queries)
    least_total, mix = ((HELDOUT4_MIN_TOTAL, HELDOUT4_MIX) if fifth else (HELDOUT3_MIN_TOTAL, HELDOUT3_MIX) if fourth else (HELDOUT2_MIN_TOTAL, HELDOUT2_MIX)
                        if third else (HELDOUT_MIN_TOTAL, HELDOUT_MIX) if against else (MIN_TOTAL, MIX))
    if total < least_total:
        errors.append("mix: %d queries, need at least %d" % (total, least_total))
    for other in against or []:
        earlier = load_lines(other)
        errors += disjoint([q for _, q in queries], earlier, os.path.basename(other))
        if third:
            errors += same_passages([q for _, q in queries], earlier, os.path.basename(other), corpus)
    if third:  # nor twice within the set
        errors += same_passages([q for _, q in queries], [q for _, q in queries], os.path.basename(queries_path), corpus)
    for kind, least in mix.items():
        if kinds[kind] < least:
            errors.append("mix: %d %s queries, need at least %d" % (kinds[kind], kind, least))
    if kinds["natural"] > MAX_NATURAL:
        errors.append("mix: %d natural queries, want at most %d" % (kinds["natural"], MAX_NATURAL))
    # Every format the samples hold (by extension) is judged by at least one query of each set.
    formats = collections.Counter()
    for _, q in queries:
        rel = q.get("relevant") if isinstance(q.get("relevant"), list) else []
        for ext in {source_kind(r["key"]) for r in rel if isinstance(r, dict) and isinstance(r.get("key"), str)}:
            formats[ext] += 1
    held = collections.Counter(source_kind(key) for key, _ in corpus.texts)
    for ext in sorted(held):
        if third and ext in (HELDOUT4_UNCOVERED if fifth else HELDOUT3_UNCOVERED if fourth else HELDOUT2_UNCOVERED):
            continue
        if formats[ext] < FORMAT_MIN:
            errors.append("coverage: %d queries judge a .%s document (samples/ holds %d), need %d" % (
                formats[ext], ext, held[ext], FORMAT_MIN))
    copies = sum(1 for _, q in queries if isinstance(q.get("relevant"), list)
                 and len({r.get("key") for r in q["relevant"] if isinstance(r, dict)}) > 1)
    if copies < 3:
        errors.append("mix: only %d queries have answers in several documents (copies), need 3" % copies)

    if run_ocr:
        warnings += ocr_warnings(queries, samples)

    print("queries: %d, relevant entries: %d, queries with several documents: %d" % (total, entries, copies))
    print("per kind:   " + ", ".join("%s %d" % (k, kinds[k]) for k in KINDS))
    print("per source: " + ", ".join("%s %d" % kv for kv in sorted(sources.items())))
    print("per format: " + ", ".join("%s %d" % kv for kv in sorted(formats.items())) + " (queries)")
    for w in warnings:
        print("WARNING " + w)
    for e in errors:
        print("ERROR " + e)
    print("FAILED: %d problem(s)" % len(errors) if errors else "OK")
    return 1 if errors else 0


def disjoint(queries, tuning, name):
    """Problems where the held-out `queries` repeat an id, a query text or a judged passage of `tuning`."""
    ids = {q.get("id") for q in tuning}
    texts = {norm(q.get("query", "")).lower() for q in tuning}
    passages = {(r.get("key"), norm(r.get("contains", ""))) for q in tuning for r in q.get("relevant") or []}
    out = []
    for q in queries:
        qid = q.get("id")
        if qid in ids:
            out.append("%s: id also used in %s" % (qid, name))
        if norm(str(q.get("query", ""))).lower() in texts:
            out.append("%s: query also in %s" % (qid, name))
        for r in q.get("relevant") or []:
            if isinstance(r, dict) and (r.get("key"), norm(str(r.get("contains", "")))) in passages:
                out.append("%s: passage %r of %s also judged in %s" % (qid, r.get("contains"), r.get("key"), name))
    return out


def same_passages(queries, earlier, name, corpus):
    """Problems where `queries` judge a passage `earlier` judged: a phrase overlapping one of the earlier
    set's phrases in the same document (page), or in the same table row or JSON record."""
    judged = collections.defaultdict(list)  # (key, page) -> [(spans, record numbers, phrase, id)]
    for q in earlier:
        for r in q.get("relevant") or []:
            if isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("contains"), str):
                doc = (r["key"], r.get("page"))
                judged[doc].append((corpus.spans(doc, r["contains"]), corpus.record_numbers(r["key"], r["contains"]),
                                    r["contains"], q.get("id")))
    out = []
    for q in queries:
        for r in q.get("relevant") or []:
            if not (isinstance(r, dict) and isinstance(r.get("key"), str) and isinstance(r.get("contains"), str)):
                continue
            doc = (r["key"], r.get("page"))
            spans, records = corpus.spans(doc, r["contains"]), corpus.record_numbers(r["key"], r["contains"])
            for other_spans, other_records, phrase, qid in judged.get(doc, []):
                if qid == q.get("id"):
                    continue
                overlap = any(a < d and c < b for a, b in spans for c, d in other_spans)
                if overlap or records & other_records:
                    out.append("%s: %r in %s%s is the passage %s judged in %s (%r)" % (
                        q.get("id"), r["contains"], r["key"], "" if r.get("page") is None else " p%d" % r["page"],
                        qid, name, phrase))
    return out


def ocr_warnings(queries, samples):
    if not shutil.which("tesseract"):
        return ["--ocr: tesseract is not installed; OCR output not checked"]
    cache, out = {}, []
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    for _, q in queries:
        for r in q.get("relevant") or []:
            key = r.get("key") if isinstance(r, dict) else None
            if key not in OCR_FULL_IMAGES | OCR_HEADING_IMAGES:
                continue
            if key not in cache:
                res = subprocess.run(["tesseract", os.path.join(samples, key), "-"], capture_output=True, env=env)
                cache[key] = norm(res.stdout.decode("utf-8", "replace"))
            if norm(r.get("contains", "")) not in cache[key]:
                out.append("%s: %r not in tesseract's output for %s" % (q.get("id"), r.get("contains"), key))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--queries", help="the query file (queries.jsonl, or heldout.jsonl with --heldout)")
    ap.add_argument("--heldout", action="store_true",
                    help="check a held-out set: its own mix, and disjoint from --against")
    ap.add_argument("--against", default=os.path.join(here, "queries.jsonl"),
                    help="with --heldout: the tuning set it must not repeat (default queries.jsonl)")
    ap.add_argument("--heldout2", action="store_true",
                    help="check the third set (heldout2.jsonl): its ids and mix, no passage of the other two")
    ap.add_argument("--heldout3", action="store_true",
                    help="check the fourth set (heldout3.jsonl): its ids and mix, no passage of the other three")
    ap.add_argument("--heldout4", action="store_true",
                    help="check the fifth set (heldout4.jsonl): its ids and mix, no passage of the other four")
    ap.add_argument("--samples", default=os.path.normpath(os.path.join(here, "..", "..", "samples")))
    ap.add_argument("--ocr", action="store_true", help="also OCR the images with tesseract (warnings only)")
    args = ap.parse_args()
    if not shutil.which("pdftotext"):
        print("ERROR pdftotext is not installed (poppler-utils)")
        return 1
    if args.heldout4:
        earlier = [os.path.join(here, name) for name in ("queries.jsonl", "heldout.jsonl", "heldout2.jsonl",
                                                         "heldout3.jsonl")]
        return check(args.queries or os.path.join(here, "heldout4.jsonl"), args.samples, args.ocr, earlier,
                     third=True, fourth=True, fifth=True)
    if args.heldout3:
        earlier = [os.path.join(here, name) for name in ("queries.jsonl", "heldout.jsonl", "heldout2.jsonl")]
        return check(args.queries or os.path.join(here, "heldout3.jsonl"), args.samples, args.ocr, earlier,
                     third=True, fourth=True)
    if args.heldout2:
        earlier = [os.path.join(here, "queries.jsonl"), os.path.join(here, "heldout.jsonl")]
        return check(args.queries or os.path.join(here, "heldout2.jsonl"), args.samples, args.ocr, earlier, third=True)
    queries = args.queries or os.path.join(here, "heldout.jsonl" if args.heldout else "queries.jsonl")
    return check(queries, args.samples, args.ocr, [args.against] if args.heldout else None)


if __name__ == "__main__":
    sys.exit(main())
