#!/usr/bin/env python3
"""A small support assistant behind an HTTP API, to show (and test) `--target http:FILE.toml`.

It answers from a folder of manuals: the section sharing the most words with the question,
its first sentences as the answer, the manual's id as the source. The answer streams as
server-sent events, one chunk per few words, and every request needs the bearer token in
ASSISTANT_TOKEN — the shape of a real RAG service's API, with none of its quality.

    ASSISTANT_TOKEN=secret python3 examples/http-target/app.py datasets/trailgear/corpus --port 8765

Endpoints: POST /ask (SSE), POST /ask-json (one JSON document), POST /ask-broken (a chunk
that is not JSON), POST /flaky (503 on every other request), GET or POST / (an HTML page).
`--delay S` waits S seconds between chunks (a slow model).
`--port 0` picks a free port; the first line printed is `listening on PORT`.
"""
import argparse
import json
import os
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

WORD = re.compile(r"[a-z0-9]+")
STOP = set("a an and are as at be by can do does for from how i in is it my of on or the to what when where which who why with you your".split())


def words(text):
    return {w for w in WORD.findall(text.lower()) if w not in STOP}


def load_sections(folder):
    sections = []
    for path in sorted(Path(folder).glob("*.md")) + sorted(Path(folder).glob("*.txt")):
        doc = path.stem
        for part in re.split(r"\n(?=#+ )", path.read_text(encoding="utf-8")):
            body = "\n".join(line for line in part.splitlines() if not line.startswith("#")).strip()
            # A title block ("Model SS-2. Manual revision 2.3.") answers nothing.
            if len(body.split()) >= 12:
                sections.append((doc, part, words(part), body))
    return sections


def answer(sections, question):
    asked = words(question)
    if not asked or not sections:
        return "I could not find that in the manuals.", []
    doc, _, _, body = max(sections, key=lambda s: len(asked & s[2]) / (1 + len(s[2]) ** 0.5))
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(body.split()))
    return " ".join(sentences[:2]), [doc]


class Handler(BaseHTTPRequestHandler):
    sections = []
    token = ""
    delay = 0.0
    flaky_count = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def send_json(self, status, document):
        data = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.send_page()

    def send_page(self):
        page = b"<!doctype html><html><body><h1>Support assistant</h1><p>POST /ask</p></body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(page)))
        self.end_headers()
        self.wfile.write(page)

    def do_POST(self):
        if self.path == "/":
            return self.send_page()
        if self.headers.get("Authorization") != f"Bearer {self.token}":
            return self.send_json(401, {"error": "missing or wrong bearer token"})
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"{}")
            question = request["question"]
        except (ValueError, KeyError, TypeError):
            return self.send_json(400, {"error": "expected {\"question\": \"...\"}"})
        text, sources = answer(self.sections, question)
        if self.path == "/flaky":
            with Handler.lock:
                Handler.flaky_count += 1
                fail = Handler.flaky_count % 2 == 1
            if fail:
                return self.send_json(503, {"error": "busy, try again"})
            return self.send_json(200, {"answer": text, "sources": [{"id": s} for s in sources]})
        if self.path == "/ask-json":
            return self.send_json(200, {"answer": text, "sources": [{"id": s} for s in sources]})
        if self.path not in ("/ask", "/ask-broken"):
            return self.send_json(404, {"error": f"no endpoint {self.path}"})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        pieces = re.findall(r"\S+\s*", text)
        for i in range(0, len(pieces), 3):
            chunk = {"delta": "".join(pieces[i:i + 3])}
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()
            time.sleep(self.delay)
            if self.path == "/ask-broken":
                self.wfile.write(b"data: {not json\n\n")
                break
        self.wfile.write(f"data: {json.dumps({'sources': sources})}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class QuietServer(ThreadingHTTPServer):
    # A client that hangs up mid-stream (a cancelled run) is normal, not worth a traceback.
    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            super().handle_error(request, client_address)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", help="folder of .md/.txt manuals")
    ap.add_argument("--port", type=int, default=8765)
    ap.add_argument("--delay", type=float, default=0.0, help="seconds between streamed chunks")
    args = ap.parse_args()
    Handler.token = os.environ.get("ASSISTANT_TOKEN", "")
    if not Handler.token:
        sys.exit("set ASSISTANT_TOKEN: the bearer token clients must send")
    Handler.sections = load_sections(args.corpus)
    Handler.delay = args.delay
    server = QuietServer(("127.0.0.1", args.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
