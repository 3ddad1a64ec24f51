"""Per-step cost on the user's path: `loopwright run --json` with a scripted model and the
echo tool, every event stored (SQLite) and printed, as a subprocess.

    python bench/cli_steps.py            # a markdown table; --json for machine-readable output
    python bench/cli_steps.py --before /tmp/old/.venv/bin/python    # and another checkout
    python bench/cli_steps.py --sizes 100 2100                       # other run lengths

With `--before PYTHON` (the interpreter of another checkout's venv, whose editable install
is that checkout's src; repeat it for more checkouts) the trees take turns within each
repeat, the order reversed from one repeat to the next, so all see the same machine load;
each other tree's figures come with the ratio of this tree's to them.

For N = 20, 100 and 500 steps (`--sizes`) it runs the command's own entry point
(`loopwright.cli.main`, what the `loopwright` script calls) in a fresh process and takes
that process's CPU time (all its threads) from just before `main` to its return: the
interpreter's start and the imports of every command's module (the same for every N, and
on a shared machine the noisiest part: tens of ms either way) are left out. Medians of
interleaved repeats; the per-step cost is the slope between sizes, taken within each
repeat, the median of those reported with its quartiles:

- marginal µs/step from each size to the next (20 -> 100, 100 -> 500; goal <= 100 µs);
- flatness: the last slope divided by the first (goal <= 1.5x).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SIZES = (20, 100, 500)


def slope_name(shorter: int, longer: int) -> str:
    return f"{shorter} -> {longer}"


def write_script(folder: Path, steps: int) -> Path:
    replies = [
        json.dumps({"thought": "echo", "action": "echo", "action_input": {"text": f"line {i}"}})
        for i in range(steps - 1)
    ]
    replies.append(json.dumps({"thought": "done", "final_answer": "done"}))
    path = folder / f"script_{steps}.json"
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


CHILD = """
import resource, sys
from loopwright.cli import build_parser, main
build_parser()  # start-up: every command's module imported
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
started = cpu()
code = main()
print(f"cpu_s={cpu() - started!r}", file=sys.stderr)
sys.exit(code)
"""
"""The child: `loopwright`'s entry point as the console script calls it (no argv: the
process's own, so it runs as the program, not as a library call)."""


def child_cpu_s(folder: Path, steps: int, run: int, python: str = sys.executable) -> float:
    """CPU seconds of one `loopwright run --json` of `steps` steps, after start-up."""
    command = [
        python, "-c", CHILD, "run", f"echo {steps} lines",
        "--model", f"scripted:{folder / f'script_{steps}.json'}", "--tools", "echo",
        "--json", "--store", str(folder / f"runs_{steps}_{run}_{abs(hash(python))}.db"),
        "--max-iterations", str(steps + 1), "--no-progress-limit", str(steps + 1),
    ]  # fmt: skip
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    err = done.stderr.decode()
    if done.returncode != 0 or "cpu_s=" not in err:
        raise SystemExit(f"loopwright run failed ({done.returncode}): {err}")
    return float(err.rpartition("cpu_s=")[2].split()[0])


def measure(
    repeats: int, pythons: tuple[str, ...] = (sys.executable,), sizes: tuple[int, ...] = SIZES
) -> list[dict[str, Any]]:
    """The figures of each interpreter's tree (`summary`), its runs interleaved with the
    others' within each repeat (the first tree first in even repeats, last in odd ones)."""
    with tempfile.TemporaryDirectory(prefix="loopwright-bench-cli-") as name:
        folder = Path(name)
        for steps in sizes:
            write_script(folder, steps)
        samples: list[dict[int, list[float]]] = [{steps: [] for steps in sizes} for _ in pythons]
        for run in range(repeats):  # interleaved: each size and tree sees the same noise
            order = list(enumerate(pythons))
            for index, python in order if run % 2 == 0 else reversed(order):
                for steps in sizes:
                    samples[index][steps].append(child_cpu_s(folder, steps, run, python))
    return [summary(repeats, tree) for tree in samples]


def summary(repeats: int, samples: dict[int, list[float]]) -> dict[str, Any]:
    """Medians and per-step slopes (from each size to the next) of one tree's CPU seconds."""
    sizes = sorted(samples)
    median = {steps: statistics.median(samples[steps]) for steps in sizes}
    slopes = {
        slope_name(a, b): paired_slopes(samples[a], samples[b], b - a)
        for a, b in itertools.pairwise(sizes)
    }
    marginal = {name: statistics.median(values) for name, values in slopes.items()}
    first, last = marginal[slope_name(*sizes[:2])], marginal[slope_name(*sizes[-2:])]
    return {
        "repeats": repeats,
        "cpu_s": median,
        "per_step_us": {steps: median[steps] / steps * 1e6 for steps in sizes},
        "marginal_us": marginal,
        "spread_us": {name: quartiles(values) for name, values in slopes.items()},
        "flatness": last / first if first > 0 else float("inf"),
    }


def paired_slopes(shorter: list[float], longer: list[float], steps: int) -> list[float]:
    """µs a step between the two sizes, one per repeat: the runs of one repeat follow each
    other, so they share the machine's state (a slope of medians mixes repeats: the 20 ->
    100 one moved ±20 µs between passes of the same code)."""
    return [(b - a) / steps * 1e6 for a, b in zip(shorter, longer, strict=True)]


def quartiles(values: list[float]) -> tuple[float, float]:
    low, _, high = statistics.quantiles(values, n=4) if len(values) > 1 else (values * 3)
    return (low, high)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--before", metavar="PYTHON", action="append", default=[], help="another checkout's"
    )
    parser.add_argument("--sizes", metavar="N", type=int, nargs="+", default=list(SIZES))
    args = parser.parse_args()
    if len(args.sizes) < 2:
        parser.error("--sizes needs two run lengths or more")
    os.environ.setdefault("PYTHONHASHSEED", "0")
    results = measure(args.repeats, (sys.executable, *args.before), tuple(sorted(args.sizes)))
    if args.json:
        print(json.dumps(results[0] if len(results) == 1 else results, indent=2))
        return
    if args.before:
        print_comparison(args.repeats, args.before, results)
        return
    result = results[0]
    print("`loopwright run --json`, scripted model, echo tool, SQLite store; CPU of the process")
    print(f"from the command's start to its end (medians of {args.repeats} repeats)\n")
    print("| N steps | CPU ms (median) | µs per step incl. the run's set-up |")
    print("| ---: | ---: | ---: |")
    for steps, cpu in result["cpu_s"].items():
        print(f"| {steps} | {cpu * 1000:.0f} | {result['per_step_us'][steps]:.0f} |")
    slopes = ", ".join(
        f"{value:.1f} ({name}; {low:.0f}-{high:.0f})"
        for (name, value), (low, high) in zip(
            result["marginal_us"].items(), result["spread_us"].values(), strict=True
        )
    )
    names = list(result["marginal_us"])
    print(
        f"\nmarginal µs per step (median of the repeats, quartiles): {slopes}; goal <= 100\n"
        f"flatness ({names[-1]} slope / {names[0]} slope): {result['flatness']:.2f}x "
        "(goal <= 1.5x)"
    )


def print_comparison(repeats: int, before: list[str], results: list[dict[str, Any]]) -> None:
    print("`loopwright run --json`, scripted model, echo tool, SQLite store; this tree and")
    print(f"each --before alternated, CPU of the process (medians of {repeats} repeats)\n")
    for index, python in enumerate(before, 1):
        print(f"- before {index}: {python}")
    heads = "".join(f" before {i} | ratio |" for i in range(1, len(before) + 1))
    print(f"\n| measure | this tree |{heads}")
    print("| --- | ---: |" + " ---: | ---: |" * len(before))
    rows: list[tuple[str, tuple[Any, ...]]]
    rows = [(f"µs a step at N = {n} incl. set-up", ("per_step_us", n)) for n in results[0]["cpu_s"]]
    rows += [
        (f"marginal µs a step {name}", ("marginal_us", name)) for name in results[0]["marginal_us"]
    ]
    for label, path in rows:
        now = pick(results[0], path)
        cells = "".join(
            f" {old:.0f} | {now / old:.2f} |" for old in (pick(r, path) for r in results[1:])
        )
        print(f"| {label} | {now:.0f} |{cells}")


def pick(result: dict[str, Any], path: tuple[Any, ...]) -> float:
    value: Any = result
    for key in path:
        value = value[key]
    return float(value)


if __name__ == "__main__":
    main()
