#!/usr/bin/env python3
"""Check that every golden `context` in questions.jsonl occurs verbatim (modulo
whitespace) in the text Assay extracts from the cited document.

Usage: python3 check_contexts.py [--assay PATH]
The Assay binary is taken from --assay, else $ASSAY, else `assay` on PATH,
else target/debug/assay. Exit status 1 if any context is missing.
"""
import json, os, re, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))

def assay_bin():
    if "--assay" in sys.argv:
        return sys.argv[sys.argv.index("--assay") + 1]
    if os.environ.get("ASSAY"):
        return os.environ["ASSAY"]
    return shutil.which("assay") or "target/debug/assay"

def norm(s):
    return re.sub(r"\s+", " ", s).strip()

def main():
    exe = assay_bin()
    texts = {}
    corpus = os.path.join(HERE, "corpus")
    for name in sorted(os.listdir(corpus)):
        stem, ext = os.path.splitext(name)
        if ext.lower() not in (".pdf", ".md", ".txt"):
            continue
        out = subprocess.run([exe, "text", os.path.join(corpus, name)],
                             capture_output=True, text=True, check=True).stdout
        texts[stem] = norm(out)
    bad = 0
    n = 0
    with open(os.path.join(HERE, "questions.jsonl"), encoding="utf-8") as f:
        for line in f:
            q = json.loads(line)
            if q.get("refuse"):
                if q.get("context") or q.get("citations"):
                    print(f"{q['id']}: refuse question has context/citations")
                    bad += 1
                continue
            n += 1
            ctx = norm(q.get("context", ""))
            docs = q.get("citations", [])
            if not ctx or not docs:
                print(f"{q['id']}: missing context or citations")
                bad += 1
                continue
            for d in docs:
                if d not in texts:
                    print(f"{q['id']}: unknown document {d!r}")
                    bad += 1
                elif ctx not in texts[d]:
                    # report the longest matching prefix to help fixing
                    k = 0
                    while k < len(ctx) and ctx[: k + 1] in texts[d]:
                        k += 1
                    print(f"{q['id']}: context not found in {d}; matches up to char {k}: ...{ctx[max(0,k-40):k]!r} | next {ctx[k:k+40]!r}")
                    bad += 1
    print(f"{n} answerable questions checked, {bad} problem(s)")
    return 1 if bad else 0

if __name__ == "__main__":
    sys.exit(main())
