"""Start-up cost of `import loopwright` and of CLI processes, against `python -c pass`.

    python bench/cli_startup.py                                  # this tree's src
    python bench/cli_startup.py --before /tmp/main-checkout/src  # and another, alternated
    python bench/cli_startup.py --instructions                   # + callgrind counts (slow)

Each command runs as a fresh process (PYTHONPATH set to the tree's src); with `--before`
the trees take turns within each repeat, so both see the same machine load. Reported per
command and tree: the median wall and CPU (user + system, from the child's rusage)
milliseconds, and the CPU ratio to `python -c pass` measured in the same run. With
`--instructions`, each command also runs once under `valgrind --tool=callgrind` (one at a
time): instruction counts do not depend on the load. Both trees are byte-compiled first, as
an installed package is (with PYTHONDONTWRITEBYTECODE set, every process would otherwise
compile the modules it imports: 114M instructions instead of 89M for `import loopwright`).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
WORKER_START = (
    "import sys; sys.argv = ['loopwright', 'worker', '--help']; "
    "import loopwright.engines.temporal; from loopwright.cli import main; main()"
)
"""What a `loopwright worker` process imports before it connects: the command line built for
`worker`, and the Temporal engine (its `--help` stands in for connecting)."""
SERVE_START = (
    "from loopwright.cli import build_parser; build_parser('serve'); import uvicorn; "
    "from loopwright.server import ServerConfig, create_app, server_runtime; "
    "from loopwright.store import memory_store; "
    "create_app(ServerConfig(runtime=server_runtime(memory_store())))"
)
"""What a `loopwright serve` process does before it listens: the command line built for
`serve`, uvicorn and the server imported, its Runtime and app made (on a memory store)."""
TASK = SRC.parent / "examples" / "look_task.yaml"  # one tool step: list the workspace


def commands(folder: Path) -> dict[str, list[str]]:
    script = folder / "hi.json"
    script.write_text(json.dumps(["Hello there."]), encoding="utf-8")
    store = ["--store", str(folder / "runs.db")]
    run = ["run", "hi", "--model", f"scripted:{script}", *store]
    task = ["task", "run", str(TASK), "--workspace", str(folder), *store]
    return {
        "python -c pass": ["-c", "pass"],
        "import loopwright": ["-c", "import loopwright"],
        "loopwright runs --help": ["-m", "loopwright", "runs", "--help"],
        "loopwright run (scripted)": ["-m", "loopwright", *run],
        "loopwright runs list": ["-m", "loopwright", "runs", "list", "--limit", "5", *store],
        "loopwright task run (one tool step)": ["-m", "loopwright", *task],
        "loopwright store migrate": ["-m", "loopwright", "store", "migrate", *store],
        "loopwright config show": ["-m", "loopwright", "config", "show"],
        "loopwright models --help": ["-m", "loopwright", "models", "--help"],
        "serve start (imports, app)": ["-c", SERVE_START],
        "worker start (imports)": ["-c", WORKER_START],
    }


def environment(src: Path, cwd: Path) -> dict[str, str]:
    """The tree's src first on the path; the store, a task's state and any config in `cwd`."""
    store = str(cwd / "runs.db")
    return {**os.environ, "PYTHONPATH": str(src), "LOOPWRIGHT_STORE": store, "HOME": str(cwd)}


def timed(argv: list[str], src: Path, cwd: Path) -> tuple[float, float]:
    """(wall ms, CPU ms) of one process."""
    env = environment(src, cwd)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=cwd, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def instructions(argv: list[str], src: Path, cwd: Path) -> int:
    """Instructions executed by one process, as callgrind counts them."""
    done = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, *argv],
        cwd=cwd,
        env=environment(src, cwd),
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    assert found, done.stderr[-500:]
    return int(found.group(1))


def measure(trees: dict[str, Path], repeats: int, counts: bool) -> list[dict[str, object]]:
    for src in trees.values():  # as installed: compiled once (PYTHONDONTWRITEBYTECODE or not)
        compileall.compile_dir(src, quiet=1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        argvs = commands(folder)
        samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for _ in range(repeats):
            for command, argv in argvs.items():
                for tree, src in trees.items():
                    samples.setdefault((command, tree), []).append(timed(argv, src, folder))
        rows: list[dict[str, object]] = []
        for tree, src in trees.items():
            base_cpu = statistics.median(c for _, c in samples[("python -c pass", tree)])
            for command, argv in argvs.items():
                walls, cpus = zip(*samples[(command, tree)], strict=True)
                cpu = statistics.median(cpus)
                row: dict[str, object] = {
                    "command": command,
                    "tree": tree,
                    "wall_ms": round(statistics.median(walls), 1),
                    "cpu_ms": round(cpu, 1),
                    "cpu_x_pass": round(cpu / base_cpu, 1),
                }
                if counts:
                    row["instructions_M"] = round(instructions(argv, src, folder) / 1e6)
                rows.append(row)
        return rows


def table(rows: list[dict[str, object]]) -> str:
    columns = list(rows[0])
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another tree's src, alternated with this one")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--instructions", action="store_true", help="also count (valgrind)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    trees = {"this": SRC} if args.before is None else {"before": args.before, "this": SRC}
    rows = measure(trees, args.repeats, args.instructions)
    print(json.dumps(rows, indent=2) if args.json else table(rows))


if __name__ == "__main__":
    main()
