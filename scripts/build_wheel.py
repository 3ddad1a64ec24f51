"""Build the llama-cpp-python wheel once, showing progress: steps done/total, elapsed, estimate.

    python scripts/build_wheel.py --version 0.3.36 --wheels ~/.cache/loopwright/wheels

The build (CMake + Ninja, about 4 minutes on 2 cores) prints `[N/M]` for each compiled file;
this script reads that from `pip wheel -v` and shows a bar on a terminal, or a plain line
every `--interval` seconds on a pipe. It needs nothing but the standard library (it runs
before anything else is installed). The full build log is kept in the wheels folder.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

PORTABLE_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"
)
"""Runs on any x86-64 with AVX2; -march=native turned on AMX, which crashes in VMs that do
not grant AMX tile state (llama.cpp segfaulted on the first token here)."""

TEXT_ONLY_HOOK = Path(__file__).with_name("llama_cpp_text_only.cmake")
WHEEL_CMAKE_ARGS = (
    f"{PORTABLE_CMAKE_ARGS} -DLLAVA_BUILD=OFF "
    f"-DCMAKE_PROJECT_llama.cpp_INCLUDE={shlex.quote(str(TEXT_ONLY_HOOK))}"
)
"""The wheel is text only: no multimodal library (`mtmd`: llama-cpp-python loads it only
for its image chat handlers, which loopwright never uses) and no llama.cpp `common`, which
only `mtmd` links (TEXT_ONLY_HOOK). 83 build steps instead of 193."""

STEP = re.compile(r"\[\s*(\d+)\s*/\s*(\d+)\s*\]")
PERCENT = re.compile(r"^\[\s*(\d+)%\]")


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}:{secs:02d}"


class Reporter:
    """A bar redrawn in place on a terminal; one plain line per `interval` on a pipe."""

    def __init__(self, label: str, out: TextIO, interval: float) -> None:
        self.label = label
        self.out = out
        self.interval = interval
        self.tty = out.isatty()
        self.started = time.monotonic()
        self.last = -1e9
        self.done, self.total = 0, 0

    def text(self) -> str:
        elapsed = time.monotonic() - self.started
        if not self.total:
            return f"{self.label}: starting, elapsed {clock(elapsed)}"
        left = elapsed / self.done * (self.total - self.done) if self.done else None
        estimate = f", about {clock(left)} left" if left is not None else ""
        return (
            f"{self.label}: {self.done}/{self.total} steps ({self.done / self.total:.0%}), "
            f"elapsed {clock(elapsed)}{estimate}"
        )

    def update(self, done: int, total: int) -> None:
        self.done, self.total = max(self.done, done), total
        now = time.monotonic()
        if self.tty:
            width = 30
            filled = int(width * self.done / self.total) if self.total else 0
            bar = "#" * filled + "-" * (width - filled)
            self.out.write(f"\r[{bar}] {self.text()}\x1b[K")
            self.out.flush()
        elif now - self.last >= self.interval or done == total:
            self.out.write(self.text() + "\n")
            self.out.flush()
            self.last = now

    def finish(self, ok: bool) -> None:
        if self.tty:
            self.out.write("\n")
        word = "done" if ok else "FAILED"
        elapsed = clock(time.monotonic() - self.started)
        self.out.write(f"{self.label}: {word} in {elapsed}\n")
        self.out.flush()


def follow(
    command: list[str], reporter: Reporter, log: Path, env: dict[str, str] | None = None
) -> int:
    """Run `command`, keep its output in `log`, report the `[N/M]` steps it prints."""
    with log.open("w", encoding="utf-8") as kept:
        process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env=env,
        )
        assert process.stdout is not None
        reporter.update(0, 0)
        for line in process.stdout:
            kept.write(line)
            step = STEP.search(line)
            percent = PERCENT.search(line)
            if step:
                reporter.update(int(step.group(1)), int(step.group(2)))
            elif percent:
                reporter.update(int(percent.group(1)), 100)
        code = process.wait()
    reporter.finish(code == 0)
    return code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--version", default="0.3.36", help="llama-cpp-python version")
    parser.add_argument("--wheels", type=Path, default=Path("~/.cache/loopwright/wheels"))
    parser.add_argument("--python", default=sys.executable, help="the pip to build with")
    parser.add_argument("--interval", type=float, default=15.0, help="seconds between lines")
    parser.add_argument("--command", default=None, help=argparse.SUPPRESS)  # tests
    args = parser.parse_args()
    wheels = args.wheels.expanduser()
    wheels.mkdir(parents=True, exist_ok=True)
    # --no-cache-dir: pip's own cache keys a built wheel by the sdist alone, so it would hand
    # back a wheel built with other CMAKE_ARGS.
    command = shlex.split(args.command) if args.command else [
        args.python, "-m", "pip", "wheel", "-v", "--no-deps", "--no-cache-dir",
        f"llama-cpp-python=={args.version}", "-w", str(wheels),
    ]  # fmt: skip
    label = f"building llama-cpp-python {args.version} (once; cached in {wheels})"
    env = {**os.environ, "CMAKE_ARGS": os.environ.get("CMAKE_ARGS", WHEEL_CMAKE_ARGS)}
    log = wheels / f"build-llama-cpp-python-{args.version}.log"
    code = follow(command, Reporter(label, sys.stdout, args.interval), log, env)
    if code != 0:
        print(f"the build failed (exit {code}); its log: {log}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
