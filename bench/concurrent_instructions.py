"""Instructions a run and a step of many concurrent runs, counted by callgrind.

    python bench/concurrent_instructions.py                  # loopwright, 5 steps
    python bench/concurrent_instructions.py --peer floor --steps 1 5 9

For each step count it runs valgrind's callgrind on two processes, one making 250 and one
making 50 concurrent runs (the scenario of bench/peers, through the same `run_once`), with
`PYTHONHASHSEED=0`, and prints the difference divided by 200: the instructions of one run,
with the process's start-up and imports taken away. About 0.5% from one pair to the next.
With three or more step counts it also prints the fit (a run + a step) through the first
and the last.

    python bench/concurrent_instructions.py --burst 250 5    # what callgrind runs

The callgrind files are left in --out-dir (default /tmp) as `<peer>-<steps>-<runs>.out`:
`callgrind_annotate --inclusive=yes /tmp/loopwright-5-250.out` shows where they go.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "peers"))
sys.path.insert(0, str(Path(__file__).parent))

LARGE, SMALL = 250, 50


def burst(peer: str, runs: int, steps: int) -> None:
    """`runs` concurrent runs of `steps` steps in one event loop."""
    if peer == "floor":
        import peer_floor as module
    else:
        import peer_loopwright as module

    async def many() -> None:
        await asyncio.gather(*(module.run_once(steps) for _ in range(runs)))

    asyncio.run(many())


def instructions(peer: str, runs: int, steps: int, out_dir: Path) -> int:
    """Instructions callgrind counts in a process making one burst."""
    out = out_dir / f"{peer}-{steps}-{runs}.out"
    command = [
        "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
        sys.executable, __file__, "--peer", peer, "--burst", str(runs), str(steps),
    ]  # fmt: skip
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    subprocess.run(command, env=env, check=True, capture_output=True)
    summary = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    assert summary, f"no totals in {out}"
    return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", choices=("loopwright", "floor"), default="loopwright")
    parser.add_argument("--steps", type=int, nargs="+", default=[5])
    parser.add_argument("--out-dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--burst", type=int, nargs=2, metavar=("RUNS", "STEPS"))
    args = parser.parse_args()
    if args.burst:
        burst(args.peer, *args.burst)
        return
    per_run = {}
    for steps in args.steps:
        large = instructions(args.peer, LARGE, steps, args.out_dir)
        small = instructions(args.peer, SMALL, steps, args.out_dir)
        per_run[steps] = (large - small) / (LARGE - SMALL)
        print(f"{args.peer}, {steps} steps: {per_run[steps] / 1000:,.0f}k instructions a run")
    if len(per_run) >= 3:
        first, last = min(per_run), max(per_run)
        per_step = (per_run[last] - per_run[first]) / (last - first)
        base = per_run[first] - first * per_step
        print(f"fit: {base / 1000:,.0f}k a run + {per_step / 1000:,.0f}k a step")


if __name__ == "__main__":
    main()
