"""Engine overhead vs peers: one process per framework, all in one invocation.

    python bench/peers/run.py --peers-python PATH [--out docs/benchmarks-peers.json]

loopwright and the floor run under this interpreter (the project's venv), in one process,
sample by sample in turn; the peers run under `--peers-python` (a separate venv from
bench/peers/requirements.txt), one process each. Writes the JSON
results, a Markdown table and a PNG chart of per-step overhead vs N.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
OURS = ["peer_floor", "peer_loopwright"]
PEERS = ["peer_pydantic_ai", "peer_langgraph", "peer_openai_agents", "peer_smolagents"]


def measure(python: str, modules: list[str], budget_s: float) -> list[dict[str, Any]]:
    """One framework's figures, or several measured in one process in turn."""
    command = [python, str(HERE / "_harness.py"), *modules, "--budget-s", str(budget_s)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=budget_s * 3)
    if done.returncode != 0:
        return [{"framework": m, "error": done.stderr.strip().splitlines()[-1:]} for m in modules]
    return [json.loads(line) for line in done.stdout.strip().splitlines()]


def _us(value: float) -> str:
    return f"{value:,.1f}" if value < 100 else f"{value:,.0f}"


def table(results: list[dict[str, Any]]) -> str:
    floor = next(r for r in results if r["framework"].startswith("hand-written"))
    lines = [
        "| framework | CPU µs/step N=20 | N=100 | N=500 | vs floor (N=500) | import s "
        "| runs per CPU-s (1,000 concurrent) | peak RSS MB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        if "error" in r:
            lines.append(f"| {r['framework']} | failed: {r['error']} | | | | | | |")
            continue
        steps = r["per_step_us"]
        ratio = steps["500"] / floor["per_step_us"]["500"] if "500" in steps else float("nan")
        cells = [_us(steps.get(n, float("nan"))) for n in ("20", "100", "500")]
        lines.append(
            f"| {r['framework']} | {' | '.join(cells)} | {ratio:,.1f}x | {r['import_s']:.2f} "
            f"| {r['runs_per_s_1000_concurrent']:,.0f} | {r['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def summary(results: list[dict[str, Any]]) -> str:
    """loopwright against the floor and against the fastest peer, at every N."""
    ours = next(r for r in results if r["framework"] == "loopwright")
    floor = next(r for r in results if r["framework"].startswith("hand-written"))
    peers = [r for r in results if "error" not in r and r not in (ours, floor)]
    lines = []
    for n in ("20", "100", "500"):
        mine = ours["per_step_us"][n]
        line = f"N={n}: loopwright {mine / floor['per_step_us'][n]:.1f}x the floor"
        timed = [r for r in peers if n in r["per_step_us"]]
        if timed:
            fastest = min(timed, key=lambda r: r["per_step_us"][n])
            lead = fastest["per_step_us"][n] / mine
            line += f", {lead:.1f}x faster than the fastest peer ({fastest['framework']})"
        lines.append(line)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peers-python", required=True)
    parser.add_argument("--out", default="docs/benchmarks-peers.json")
    parser.add_argument("--chart", default="docs/overhead-vs-n.png")
    parser.add_argument("--budget-s", type=float, default=240.0)
    args = parser.parse_args()
    # loopwright and the floor in one process, sample by sample in turn: their ratio is
    # what the goals are about, and a shared machine's load shifts between processes
    results = measure(sys.executable, OURS, args.budget_s)
    for module in PEERS:
        results += measure(args.peers_python, [module], args.budget_s)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    subprocess.run([args.peers_python, str(HERE / "chart.py"), args.out, args.chart], check=True)
    print(table(results))
    print()
    print(summary(results))


if __name__ == "__main__":
    main()
