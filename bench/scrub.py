"""Secret scrubbing: recall, false positives and speed.

    python bench/scrub.py                # table
    python bench/scrub.py --json         # machine-readable
    python bench/scrub.py --code-root /usr/lib/python3.11   # FP rate on a code tree

- recall: planted fake secrets (tests/fixtures/secrets/planted.jsonl) whose value no
  longer appears, even in part (any 12-character piece of it), after scrubbing;
- false positives: redactions in ordinary code and prose, per source: the fixture
  tests/fixtures/secrets/ordinary.txt, this project's own sources and docs, a slice of the
  standard library (the modules that talk about passwords, cookies and headers the most:
  http, email, urllib, logging, json, smtplib, imaplib, ftplib, netrc, getpass, ssl,
  argparse, subprocess), and optionally a larger code tree (`--code-root`);
- speed: scrubbing a 1 MB observation of ordinary text with a few secrets in it, and one
  with none (the common case), median of several runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sysconfig
import time
from pathlib import Path
from typing import Any

from loopwright.safety.scrub import Scrubber

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "secrets"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
STDLIB_SLICE = [
    *("http", "email", "urllib", "logging", "json"),
    *("smtplib.py", "imaplib.py", "ftplib.py", "netrc.py", "getpass.py", "ssl.py"),
    *("argparse.py", "subprocess.py"),
]
TEXT_SUFFIXES = {".py", ".md", ".txt", ".rst", ".toml", ".yaml", ".yml", ".json", ".cfg"}


def leaked(secret: str, text: str, piece: int = 12) -> bool:
    if secret in text:
        return True
    return any(secret[i : i + piece] in text for i in range(max(1, len(secret) - piece)))


def measure_recall(scrubber: Scrubber) -> dict[str, Any]:
    cases = [json.loads(line) for line in (CORPUS / "planted.jsonl").read_text().splitlines()]
    missed = [c["kind"] for c in cases if leaked(c["secret"], scrubber.scrub(c["text"]).text)]
    kinds = sorted({c["kind"] for c in cases})
    return {
        "cases": len(cases),
        "kinds": len(kinds),
        "caught": len(cases) - len(missed),
        "recall": (len(cases) - len(missed)) / len(cases),
        "missed_kinds": missed,
    }


def _text_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    return [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in TEXT_SUFFIXES]


def measure_false_positives(scrubber: Scrubber, files: list[Path]) -> dict[str, Any]:
    chars = lines = redactions = files_hit = 0
    for file in files:
        text = file.read_text(encoding="utf-8", errors="replace")
        chars += len(text)
        lines += text.count("\n") + 1
        found = scrubber.scrub(text).redactions
        redactions += found
        files_hit += bool(found)
    return {
        "files": len(files),
        "megabytes": round(chars / 1e6, 2),
        "lines": lines,
        "redactions": redactions,
        "per_10k_lines": round(redactions / max(lines, 1) * 10_000, 3),
        "files_with_a_redaction": files_hit,
    }


def false_positive_sources(code_roots: list[Path]) -> dict[str, list[Path]]:
    """Ordinary text, by source: what the false-positive rate is measured on."""
    stdlib = [f for name in STDLIB_SLICE for f in _text_files(STDLIB / name)]
    sources = {
        "fixture": [CORPUS / "ordinary.txt"],
        "project src+docs": _text_files(ROOT / "src") + _text_files(ROOT / "docs"),
        "stdlib slice": stdlib,
    }
    for root in code_roots:
        sources[str(root)] = _text_files(root)
    return sources


def one_megabyte(with_secrets: bool) -> str:
    source = ROOT / "src" / "loopwright" / "safety" / "scrub.py"
    base = (CORPUS / "ordinary.txt").read_text() + source.read_text()
    text = (base * (1_000_000 // len(base) + 1))[:1_000_000]
    if with_secrets:
        cases = [json.loads(line) for line in (CORPUS / "planted.jsonl").read_text().splitlines()]
        step = len(text) // 10
        parts = [text[i * step : (i + 1) * step] + "\n" + cases[i * 7]["text"] for i in range(10)]
        text = "\n".join(parts)
    return text


def measure_speed(scrubber: Scrubber, repeats: int = 7) -> dict[str, float]:
    results: dict[str, float] = {}
    for label, with_secrets in (("clean_1mb_ms", False), ("with_secrets_1mb_ms", True)):
        text = one_megabyte(with_secrets)
        timings = []
        for _ in range(repeats):
            started = time.perf_counter()
            scrubber.scrub(text)
            timings.append((time.perf_counter() - started) * 1000)
        results[label] = round(statistics.median(timings), 1)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--code-root", action="append", default=[], type=Path)
    args = parser.parse_args()
    scrubber = Scrubber.default(environ={})
    report = {
        "recall": measure_recall(scrubber),
        "false_positives": {
            name: measure_false_positives(scrubber, files)
            for name, files in false_positive_sources(args.code_root).items()
        },
        "speed": measure_speed(scrubber),
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    recall, fp, speed = report["recall"], report["false_positives"], report["speed"]
    print(
        f"recall      {recall['caught']}/{recall['cases']} planted secrets "
        f"({recall['recall']:.1%}, {recall['kinds']} kinds); missed: {recall['missed_kinds']}"
    )
    for name, one in fp.items():
        print(
            f"false pos.  {name}: {one['redactions']} redactions in {one['lines']:,} lines "
            f"({one['megabytes']} MB, {one['files']} files): {one['per_10k_lines']} per 10k lines"
        )
    print(f"speed       1 MB clean: {speed['clean_1mb_ms']} ms; "
          f"1 MB with secrets: {speed['with_secrets_1mb_ms']} ms")  # fmt: skip


if __name__ == "__main__":
    main()
