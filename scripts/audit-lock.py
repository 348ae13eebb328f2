#!/usr/bin/env python3
"""Check Cargo.lock files against a checkout of the RustSec advisory database, offline.

`cargo audit` needs its advisory database and is not installed here; this reads the same
advisories (crates/<name>/RUSTSEC-*.md, TOML front matter) and the lock files, and prints
every locked crate version that an advisory covers: its id, kind (vulnerability, or the
informational kind: unmaintained, unsound, notice), date, title and the versions that fix it.
Withdrawn advisories are skipped. Exit status 1 when a vulnerability (not informational)
matches, so it can gate; 0 otherwise.

    python3 scripts/audit-lock.py ADVISORY_DB Cargo.lock src-tauri/Cargo.lock
"""

import pathlib
import re
import sys
import tomllib


def version_key(text):
    """A semver version as a comparable tuple; a pre-release sorts before its release."""
    core, _, pre = text.strip().partition("-")
    core = core.split("+")[0]
    parts = [int(p) for p in (core.split(".") + ["0", "0"])[:3]]
    return (*parts, 0 if pre else 1, pre)


def matches(requirement, version):
    """Whether `version` satisfies one RustSec requirement such as ">= 1.2, < 1.4" or "^0.12"."""
    for clause in requirement.split(","):
        clause = clause.strip()
        found = re.fullmatch(r"(>=|<=|>|<|=|\^|~)?\s*([0-9][0-9A-Za-z.+-]*)", clause)
        if not found:
            raise ValueError(f"unknown requirement {requirement!r}")
        op, bound = found.group(1) or "^", found.group(2)
        v, b = version_key(version), version_key(bound)
        if op == ">=" and not v >= b or op == ">" and not v > b:
            return False
        if op == "<=" and not v <= b or op == "<" and not v < b:
            return False
        if op == "=" and v != b:
            return False
        if op in ("^", "~"):
            given = bound.split("-")[0].split(".")
            # ^1.2.3: same major; ^0.2.3: same minor; ^0.0.3: same patch. ~1.2: same minor.
            if op == "~":
                same = 2 if len(given) >= 2 else 1
            else:
                same = next((i + 1 for i, p in enumerate(given) if p != "0"), len(given))
            if not (v >= b and v[:same] == b[:same]):
                return False
    return True


def advisories(db):
    """(package, front matter, title) of every advisory file."""
    for path in sorted((db / "crates").glob("*/RUSTSEC-*.md")):
        text = path.read_text(encoding="utf-8")
        front = re.search(r"```toml\n(.*?)\n```", text, re.S)
        if not front:
            continue
        meta = tomllib.loads(front.group(1))
        title = re.search(r"^# (.+)$", text[front.end():], re.M)
        yield meta["advisory"]["package"], meta, title.group(1).strip() if title else ""


def locked(lock_file):
    """(name, version) of every registry package in a lock file."""
    lock = tomllib.loads(pathlib.Path(lock_file).read_text(encoding="utf-8"))
    return {(p["name"], p["version"]) for p in lock.get("package", []) if "source" in p}


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    db = pathlib.Path(argv[1])
    packages = set()
    for lock_file in argv[2:]:
        packages |= locked(lock_file)
    by_name = {}
    for name, version in packages:
        by_name.setdefault(name, []).append(version)
    vulnerable = 0
    found = []
    for package, meta, title in advisories(db):
        advisory = meta["advisory"]
        if package not in by_name or advisory.get("withdrawn"):
            continue
        versions = meta.get("versions", {})
        safe = versions.get("patched", []) + versions.get("unaffected", [])
        for version in sorted(by_name[package], key=version_key):
            if any(matches(r, version) for r in safe):
                continue
            kind = advisory.get("informational") or "vulnerability"
            vulnerable += kind == "vulnerability"
            fixed = ", ".join(versions.get("patched", [])) or "no fixed version"
            found.append(f"{package} {version}\t{advisory['id']}\t{kind}\t{advisory.get('date', '')}\t{title} (fixed: {fixed})")
    for line in sorted(found):
        print(line)
    print(f"{len(packages)} locked packages checked against {db}; {len(found)} advisories match, {vulnerable} of them vulnerabilities")
    return 1 if vulnerable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
