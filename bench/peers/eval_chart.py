"""Tasks passed per framework on each server, as a PNG (run in the peers venv: matplotlib).

    bench/.venv-peers/bin/python bench/peers/eval_chart.py DATA.json docs/eval-compare.png

DATA: {"servers": {label: {framework: {"passed": n, "total": n}}}}, written by
bench/eval_compare.py.
"""

from __future__ import annotations

import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main(data_path: str, chart_path: str) -> None:
    with open(data_path, encoding="utf-8") as handle:
        servers: dict[str, dict[str, dict[str, int]]] = json.load(handle)["servers"]
    frameworks: list[str] = []
    for rows in servers.values():
        frameworks += [name for name in rows if name not in frameworks]
    figure, axis = plt.subplots(figsize=(7.5, 4.2), dpi=120)
    width = 0.8 / max(1, len(servers))
    for number, (label, rows) in enumerate(servers.items()):
        xs = [i + (number - (len(servers) - 1) / 2) * width for i in range(len(frameworks))]
        shares = [_share(rows.get(name)) for name in frameworks]
        bars = axis.bar(xs, shares, width, label=label)
        for bar, name in zip(bars, frameworks, strict=True):
            row = rows.get(name)
            text = f"{row['passed']}/{row['total']}" if row else "not run"
            axis.annotate(text, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                          ha="center", va="bottom", fontsize=7, xytext=(0, 2),
                          textcoords="offset points")  # fmt: skip
    axis.set_xticks(range(len(frameworks)), labels=frameworks, fontsize=8)
    axis.set_ylim(0, 100)
    axis.set_ylabel("tasks passed (%)")
    axis.set_title("Qwen2.5-Coder-1.5B on the 40-task suite, same server and GGUF for all")
    axis.grid(True, axis="y", alpha=0.3)
    axis.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(chart_path)


def _share(row: dict[str, int] | None) -> float:
    return 100.0 * row["passed"] / row["total"] if row and row["total"] else 0.0


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
