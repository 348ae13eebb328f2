#!/usr/bin/env python3
"""PDF text fidelity: Assay's extraction (`assay text FILE`) against poppler's `pdftotext`.

For each PDF prints two shares of word tokens (lower-cased runs of letters and digits):
  ours_missing:   our tokens that do not occur anywhere in pdftotext's text (split or glued
                  words, broken ligatures, stray symbols: words that are not in the document);
  theirs_missing: pdftotext's tokens that do not occur anywhere in ours (text we lost).
Running headers, footers and page numbers that Assay drops on purpose mostly still occur
elsewhere in the text, so they count little. Hyphenated words are joined and URLs left out on both sides.

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
    text = re.sub(r"(\w)-\s*\n\s*(\w)", r"\1\2", text)
    text = re.sub(r"(\w)-(\w)", r"\1\2", text)
    # URLs are cut at different places by the two tools' line joining: not words.
    text = re.sub(r"\S*://\S*", " ", text)
    return [w.lower() for w in WORD.findall(text)]


def measure(assay, pdf):
    ours = subprocess.run([assay, "text", pdf], capture_output=True, text=True, check=True).stdout
    theirs = subprocess.run(["pdftotext", "-enc", "UTF-8", pdf, "-"], capture_output=True, text=True, check=True).stdout
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
    parser.add_argument("pdfs", nargs="+")
    args = parser.parse_args()
    rows = [measure(args.assay, pdf) for pdf in args.pdfs]
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
