"""Per-step overhead vs N for every framework, as a PNG (run in the peers venv: matplotlib)."""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(results_path: str, chart_path: str) -> None:
    with open(results_path, encoding="utf-8") as handle:
        results = json.load(handle)
    figure, axis = plt.subplots(figsize=(7, 4.2), dpi=120)
    for r in results:
        if "error" in r:
            continue
        sizes = sorted(int(n) for n in r["per_step_us"])
        times = [r["per_step_us"][str(n)] for n in sizes]
        axis.plot(sizes, times, marker="o", label=r["framework"])
    axis.set_xscale("log")
    axis.set_xticks([20, 100, 500], labels=["20", "100", "500"])
    axis.minorticks_off()
    axis.set_yscale("log")
    axis.set_xlabel("steps per run (N)")
    axis.set_ylabel("engine CPU time per step (µs, log)")
    axis.set_title("Agent-loop overhead per step, scripted zero-latency model")
    axis.grid(True, which="both", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(chart_path)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
