#!/usr/bin/env python3
"""Check the library's one-way layers (DESIGN.md, Layering; ARCHITECTURE.md, Invariants).

Reads every `crate::<module>` path in src/<module>/ (and `super::<file>` / `crate::<module>::<file>`
paths between the files of one module), then fails when:
  - the graph of top-level modules has a cycle,
  - the graph of files inside one module has a cycle (tests excluded: a `mod tests` block may
    reach back into its parent),
  - a module imports one that its layer may not see (the FORBIDDEN table below).
Prints the module graph, so a reviewer can see the layers at a glance.
Usage: python3 scripts/check-layers.py [SRC_DIR]
"""
import re
import sys
from pathlib import Path

# The leaf layers and the only modules each may import.
ONLY = {
    "dataset": set(),
    "third_party_panic": set(),
    # The allocator's settings for the process (called by the faces' main).
    "heap": set(),
    # Limits for rendering user and model-file templates (fuel, output size): a leaf.
    "bounded_template": set(),
    "record": {"dataset"},
    # Model files (registry, pull, scan, GGUF headers) know nothing of running a model.
    "models": {"third_party_panic"},
    "llm": {"models", "third_party_panic", "bounded_template"},
    "corpus": {"dataset", "third_party_panic"},
}
# Modules no other module imports: only the faces do. `bench` measures the layers below it, so
# no layer needs another just for the sake of a benchmark.
TOP = {"bench"}
# What the other layers must never import (ARCHITECTURE.md states the same rules in words).
EVALUATION = {"run", "targets", "judge", "generate"}
FORBIDDEN = {
    "metrics": EVALUATION | {"store", "stats", "compare", "report", "retrieve"},
    "retrieve": EVALUATION | {"metrics", "store", "stats", "compare", "report"},
    "store": EVALUATION | {"stats", "compare", "report"},
    "stats": EVALUATION | {"compare", "report"},
    "compare": EVALUATION | {"report", "retrieve"},
    "report": EVALUATION,
    "judge": {"run", "targets", "generate", "store", "stats", "compare", "report"},
    "targets": {"run", "generate", "store", "stats", "compare", "report"},
    "generate": {"run", "stats", "compare", "report"},
}

# Face rules (DESIGN.md, The front door): the CLI and the desktop app map arguments in and
# events out; they reach the library only through its front doors (`run`: experiments, stored
# runs, the judge catalog and calibration; `compare`; `report`; `generate`; `models`; `bench`),
# the inputs they name (`dataset`, `corpus`) and the records they show (`record`, and `stats`
# for a run read back with its summary), and `heap`, the process's allocator settings their
# `main` applies. Never the stages behind them: `llm`, `judge`, `store`, `retrieve`, `targets`,
# `metrics`.
FACES = ["src/bin/assay", "src-tauri/src"]
FACE_MODULES = {"run", "compare", "report", "generate", "models", "bench", "dataset", "corpus", "record", "stats", "heap"}
# Argument types a face parses its input into (a clap value, a form field): values with no
# behaviour, named where they are defined.
FACE_VOCABULARY = {"DeviceChoice", "RetrievalMode"}
# Known debt, named so it can only shrink: `assay bench` still assembles its report in the
# CLI (judge specs, answer samples, rerankers, the index settings), and `assay models try` and
# `device-check` drive the model runtime directly. Their front doors (`bench`, `models`) should
# take this over; until then these files may reach exactly these modules, and no other file
# may reach any.
FACE_DEBT = {
    "src/bin/assay/commands_index_bench.rs": {"judge", "llm", "retrieve", "targets"},
    "src/bin/assay/models.rs": {"llm"},
}
# Every `assay::…` path in a face, up to its last name (`{` of a grouped import stops it).
FACE_PATH = re.compile(r"\bassay::((?:[A-Za-z_][A-Za-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)")

CRATE_PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)(?:::([a-z_][a-z0-9_]*))?")
SUPER_PATH = re.compile(r"\bsuper::([a-z_][a-z0-9_]*)")


def code_lines(text):
    """Lines outside `#[cfg(test)]` modules and comments."""
    in_tests = False
    depth = 0
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            continue
        if not in_tests and stripped.startswith("#[cfg(test)]"):
            in_tests = True
            depth = 0
            continue
        if in_tests:
            depth += line.count("{") - line.count("}")
            if depth <= 0 and "}" in line:
                in_tests = False
            continue
        yield line


def top_modules(src):
    return sorted(
        p.stem if p.is_file() else p.name
        for p in src.iterdir()
        if (p.is_dir() and (p / "mod.rs").exists()) or (p.suffix == ".rs" and p.stem not in ("lib", "main"))
    )


def files_of(src, module):
    path = src / module
    return sorted(path.rglob("*.rs")) if path.is_dir() else [src / f"{module}.rs"]


def find_cycle(graph):
    """One cycle as a list of nodes, or None (depth-first search with colours)."""
    colour = {node: 0 for node in graph}
    stack = []

    def visit(node):
        colour[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if colour.get(nxt, 0) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if colour.get(nxt, 0) == 0:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        colour[node] = 2
        return None

    for node in sorted(graph):
        if colour[node] == 0:
            found = visit(node)
            if found:
                return found
    return None


PUB_MOD = re.compile(r"^\s*pub mod ([a-z_][a-z0-9_]*)\s*;")
PUB_USE = re.compile(r"^\s*pub use (crate|[a-z_][a-z0-9_]*)::")


def reexport_problems(src):
    """One path per item: a `pub use` may only name an item of the module's own private files.
    Re-exporting another module's item (`pub use crate::…`) or an item of a file that is itself
    public (`pub mod x;` + `pub use x::…`) gives it two paths."""
    problems = []
    for file in sorted(src.rglob("*.rs")):
        if "bin" in file.relative_to(src).parts:
            continue
        lines = list(code_lines(file.read_text()))
        public = {m.group(1) for line in lines if (m := PUB_MOD.match(line))}
        for line in lines:
            m = PUB_USE.match(line)
            if m and (m.group(1) == "crate" or m.group(1) in public):
                problems.append(f"second path by re-export: {file}: {line.strip()}")
    return problems


def main():
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    modules = top_modules(src)
    graph = {m: set() for m in modules}
    evidence = {}
    problems = []
    for module in modules:
        inner = {}
        for file in files_of(src, module):
            # A folder inside a module (corpus/pdf/) is one node of the module's file graph.
            parts = file.relative_to(src / module).parts if file.parent != src else (file.name,)
            own = parts[0] if len(parts) > 1 else file.stem
            inner.setdefault(own, set())
            for number, line in enumerate(code_lines(file.read_text()), 1):
                for target, sub in CRATE_PATH.findall(line):
                    if target not in graph or target == module:
                        if target == module and sub:
                            inner[own].add(sub)
                        continue
                    graph[module].add(target)
                    evidence.setdefault((module, target), f"{file}: {line.strip()}")
                if file.parent == src / module:
                    for sub in SUPER_PATH.findall(line):
                        inner[own].add(sub)
        files = set(inner)
        inner = {f: {t for t in ts if t in files and t != f} for f, ts in inner.items()}
        cycle = find_cycle(inner)
        if cycle:
            problems.append(f"cycle between the files of src/{module}/: {' -> '.join(cycle)}")

    for module, targets in sorted(graph.items()):
        banned = FORBIDDEN.get(module, set())
        for target in sorted(targets):
            if target in banned or target in TOP or (module in ONLY and target not in ONLY[module]):
                problems.append(f"{module} may not import {target}: {evidence[(module, target)]}")

    problems += reexport_problems(src)

    cycle = find_cycle(graph)
    if cycle:
        problems.append("cycle between modules: " + " -> ".join(cycle))

    root = src.resolve().parent
    face_uses = {}
    for face in FACES:
        for file in sorted((root / face).glob("*.rs")):
            for line in code_lines(file.read_text()):
                for path in FACE_PATH.findall(line):
                    names = path.split("::")
                    module = names[0]
                    face_uses.setdefault(module, set()).add(face)
                    if module in FACE_MODULES or (len(names) > 1 and names[-1] in FACE_VOCABULARY):
                        continue
                    if module in FACE_DEBT.get(str(file.relative_to(root)), set()):
                        continue
                    problems.append(
                        f"face {face} may not reach past the front door into {module}: "
                        f"{file.relative_to(root)}: {line.strip()}"
                    )

    print("module imports (src/):")
    for module in modules:
        print(f"  {module:18} -> {', '.join(sorted(graph[module])) or '(nothing)'}")
    print("faces (" + ", ".join(FACES) + ") -> " + ", ".join(sorted(face_uses)))
    if problems:
        print("\nlayering violations:")
        for problem in problems:
            print("  " + problem)
        return 1
    print("\nno cycles; every layer imports only below itself")
    return 0


if __name__ == "__main__":
    sys.exit(main())
