"""llama.cpp's raw speed on this machine for the embedded model: prompt evaluation and
generation, tokens per second, with and without repacked weights (llama.cpp's extra CPU
buffers; docs/models.md), alternating, each in a fresh process.

    python bench/llama_speed.py              # two pairs, 548 prompt tokens, 50 generated
    python bench/llama_speed.py --pairs 3 --threads 1

Run it on an otherwise idle machine: the figures are CPU-bound.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROMPT_TOKENS = 548  # the README command's first prompt
GENERATED = 50


def measure(threads: int) -> str:
    """One load and one measurement in this process; LOOPWRIGHT_LLAMA_REPACK decides."""
    from llama_cpp import Llama

    from loopwright.models._local import chosen_cpu_buffers, resolve_local_path

    with chosen_cpu_buffers():
        llm = Llama(
            str(resolve_local_path("")),
            n_ctx=2048,
            n_threads=threads,
            n_threads_batch=threads,
            verbose=False,
        )
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    tokens = llm.tokenize(text.encode())[:PROMPT_TOKENS]
    started = time.perf_counter()
    llm.eval(tokens)
    prompt_s = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(GENERATED):
        llm.eval([llm.sample(temp=0.0)])
    generate_s = time.perf_counter() - started
    return (
        f"prompt {len(tokens) / prompt_s:.1f} tok/s ({len(tokens)} in {prompt_s:.1f} s), "
        f"generation {GENERATED / generate_s:.1f} tok/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--one", choices=["0", "1"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(measure(args.threads))
        return
    for _ in range(args.pairs):
        for repack in ("0", "1"):
            env = {**os.environ, "LOOPWRIGHT_LLAMA_REPACK": repack}
            command = [sys.executable, __file__, "--one", repack, "--threads", str(args.threads)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            label = "repacked" if repack == "1" else "plain   "
            print(f"{label} {done.stdout.strip()}", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
