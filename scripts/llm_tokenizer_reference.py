#!/usr/bin/env python3
"""Reference token ids for the GGUF tokenizer test, from llama.cpp's `llama-tokenize`.

llama.cpp is the reference implementation of GGUF tokenizers. Build it as RECIPES.md says
(the `llama-cpp-python` source package vendors it), then:

    python3 scripts/llm_tokenizer_reference.py --llama-tokenize PATH/llama-tokenize \
        --model smollm2-135m-instruct=PATH/SmolLM2-135M-Instruct.Q4_1.gguf [--model ID=PATH ...]

writes tests/fixtures/llm/tokenizer_reference.json: for each model, the sha256 of the file and
the ids of every test string (no BOS; special markers such as <|im_start|> parsed as tokens).
"""
import argparse
import hashlib
import json
import pathlib
import subprocess

# Hard cases: unicode, code, whitespace runs, digits, chat markers, byte-level oddities.
STRINGS = [
    "Hello world",
    "What is the capital of France? Answer in one short English sentence.",
    " leading space and trailing space ",
    "Numbers: 1 12 123 1234 12345 3.14159 -42 1e10 2026-11-22",
    "Phone +1 (555) 010-9999, ext. 42",
    "tabs\tand\t\ttabs",
    "line one\nline two\n\nline four\r\nwindows line",
    "    four spaces\n        eight spaces\n",
    "Ünïcödé: naïve café, résumé, Straße, Ærøskøbing",
    "日本語のテキストと中文文本",
    "Emoji: 👍🏽 🎉 ❤️ 🇫🇷",
    "Русский текст и ελληνικά",
    "def add(a, b):\n    return a + b  # sum\n",
    "fn main() { let x: Vec<u32> = vec![1, 2, 3]; println!(\"{x:?}\"); }",
    "<div class=\"note\">&amp; &lt;tag&gt;</div>",
    "{\"label\": \"Good\", \"score\": 0.67, \"items\": [1, 2]}",
    "SELECT id, name FROM users WHERE age >= 18;",
    "It's, I'm, we're, they've, you'll, he'd, DON'T, It'S",
    "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system\nYou are a judge.<|im_end|>",
    "Hold RESET for 5 seconds until the LED blinks.",
    "!!! ??? ... --- *** ### ```",
    "a\u00a0non-breaking space and a zero\u200bwidth one",
    "Mixed CASE words: iPhone, McDonald's, eBay, HTTPServer",
    "URL: https://example.org/path?q=1&r=two#frag",
    "   ",
    "\n\n\n",
    "x",
    "1234567890",
    "Answer: Yes",
    " Yes",
    " No",
]


def tokenize(binary, model, text):
    out = subprocess.run(
        [binary, "-m", model, "-p", text, "--ids", "--log-disable", "--no-bos"],
        check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-tokenize", required=True)
    ap.add_argument("--model", action="append", required=True, help="ID=PATH")
    ap.add_argument("--out", default="tests/fixtures/llm/tokenizer_reference.json")
    args = ap.parse_args()
    result = {"tool": "llama.cpp llama-tokenize (vendored in llama-cpp-python 0.3.36)",
              "models": {}}
    for spec in args.model:
        model_id, path = spec.split("=", 1)
        sha = hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
        cases = [{"text": s, "ids": tokenize(args.llama_tokenize, path, s)} for s in STRINGS]
        result["models"][model_id] = {"sha256": sha, "cases": cases}
    pathlib.Path(args.out).write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
