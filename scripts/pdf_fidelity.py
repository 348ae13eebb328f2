#!/usr/bin/env python3
"""PDF text fidelity: Assay's extraction (`assay text FILE`) against poppler's `pdftotext`.

For each PDF prints two shares of word tokens (lower-cased runs of letters and digits):
  ours_missing:   our tokens that do not occur anywhere in pdftotext's text (split or glued
                  words, broken ligatures, stray symbols: words that are not in the document);
  theirs_missing: pdftotext's tokens that do not occur anywhere in ours (text we lost).
Page furniture that Assay drops on purpose (a page number alone on a page's first or last line,
and a line at a page edge repeated, digits aside, on half the pages) is left out of pdftotext's
text first: short documents' page numbers occur nowhere else, and a running header between
"re-" and "leases" at a page break keeps pdftotext's halves apart. `--keep-furniture` measures
without that step. Hyphenated words are joined, and URLs and words holding U+FFFD (a glyph its
font does not map) left out, on both sides.

Usage: scripts/pdf_fidelity.py [--assay target/debug/assay] [--json] FILE.pdf...
"""
import argparse
import json
import re
import subprocess
import sys
import unicodedata

WORD = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text):
    text = unicodedata.normalize("NFKC", text)
    # A word hyphenated at a line end reads as one word; so does one hyphenated inside a line
    # (the two tools decide differently whether "ELE-MENT" at a line end keeps its hyphen).
    # Typographic hyphens (U+2010; NFKC folds U+2011 into it) count as the ASCII one.
    text = text.replace("\u2010", "-")
    # A soft hyphen (U+00AD) marks where a word may break; it is not part of the word.
    text = text.replace("\u00ad", "")
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = re.sub(r"(\w)-(\w)", r"\1\2", text)
    # URLs are cut at different places by the two tools' line joining: not words. Nor is a
    # word holding U+FFFD, a glyph its font does not map: Assay may restore it from the
    # document's own spelling (corpus::pdf::ligatures), pdftotext leaves it split in two.
    text = re.sub(r"\S*://\S*", " ", text)
    text = re.sub(r"\S*\ufffd\S*", " ", text)
    return [w.lower() for w in WORD.findall(text)]


PAGE_NUMBER = re.compile(r"^[-–\s]*(page\s+)?(\d{1,5}(\s*(/|of)\s*\d{1,5})?|[ivxl]{1,6})[-–\s]*$", re.IGNORECASE)


def without_page_furniture(text):
    """pdftotext's pages (split at form feeds) without page numbers and running headers/footers."""
    pages = [[line.strip() for line in page.split("\n") if line.strip()] for page in text.split("\f")]
    def edges(lines):
        return set(range(min(2, len(lines)))) | set(range(max(len(lines) - 2, 0), len(lines)))
    def key(line):
        return " ".join(re.sub(r"\d", "#", line).split())
    counts = {}
    for lines in pages:
        for k in {key(lines[i]) for i in edges(lines)}:
            counts[k] = counts.get(k, 0) + 1
    needed = max(2, (len(pages) + 1) // 2)
    repeated = {k for k, n in counts.items() if n >= needed and len(pages) >= 2}
    kept = []
    for lines in pages:
        edge = edges(lines)
        # A bare number counts as the page's number only on its first or last line: the last
        # lines of a contents page are often its column of page references.
        outer = {0, len(lines) - 1}
        kept.extend(line for i, line in enumerate(lines)
                    if not ((i in outer and PAGE_NUMBER.match(line)) or (i in edge and key(line) in repeated)))
    return "\n".join(kept)


def measure(assay, pdf, keep_furniture=False):
    ours = subprocess.run([assay, "text", pdf], capture_output=True, text=True, check=True).stdout
    theirs = subprocess.run(["pdftotext", "-enc", "UTF-8", pdf, "-"], capture_output=True, text=True, check=True).stdout
    if not keep_furniture:
        theirs = without_page_furniture(theirs)
    ours_t, theirs_t = tokens(ours), tokens(theirs)
    theirs_v, ours_v = set(theirs_t), set(ours_t)
    ours_missing = [w for w in ours_t if w not in theirs_v]
    theirs_missing = [w for w in theirs_t if w not in ours_v]
    return {
        "file": pdf,
        "ours_words": len(ours_t),
        "theirs_words": len(theirs_t),
        "ours_missing": len(ours_missing) / max(len(ours_t), 1),
        "theirs_missing": len(theirs_missing) / max(len(theirs_t), 1),
        "examples_ours": sorted(set(ours_missing))[:15],
        "examples_theirs": sorted(set(theirs_missing))[:15],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--assay", default="target/debug/assay")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--keep-furniture", action="store_true", help="compare with pdftotext's page numbers and running headers kept")
    parser.add_argument("pdfs", nargs="+")
    args = parser.parse_args()
    rows = [measure(args.assay, pdf, args.keep_furniture) for pdf in args.pdfs]
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'file':<40} {'ours':>7} {'poppler':>7} {'ours not in poppler':>20} {'poppler not in ours':>20}")
    for r in rows:
        name = r["file"].rsplit("/", 1)[-1]
        print(f"{name:<40} {r['ours_words']:>7} {r['theirs_words']:>7} {r['ours_missing']:>19.3%} {r['theirs_missing']:>19.3%}")
        print(f"  ours only:    {' '.join(r['examples_ours'])}")
        print(f"  poppler only: {' '.join(r['examples_theirs'])}")


if __name__ == "__main__":
    sys.exit(main())
