"""Helpers of the Temporal engine tests: scripted runs (a ScriptedModel file per run) and
worker processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[2] / "src"
TOOLS_FILE = Path(__file__).with_name("run_tools.py")
VOLATILE = {"run_id", "ts", "duration_ms"}


def action(tool: str, **arguments: Any) -> str:
    return json.dumps({"thought": f"use {tool}", "action": tool, "action_input": arguments})


def final(answer: str) -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


def write_script(folder: Path, out: Path, lines: list[str]) -> Path:
    """echo, then one append_line per line, then the answer."""
    replies = [action("echo", text="hello")]
    replies += [action("append_line", path=str(out), text=line) for line in lines]
    replies.append(final(f"wrote {len(lines)} lines"))
    script = folder / "script.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return script


def run_command(script: Path, workspace: Path, store: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "loopwright", "run", "echo hello, then write the lines",
            "--model", f"scripted:{script}", "--tools", f"echo,{TOOLS_FILE}:append_line",
            "--workspace", str(workspace), "--store", store, "--json", *extra]  # fmt: skip


def shape(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events without what differs between two runs of the same script (ids, times)."""
    return [{k: v for k, v in e.items() if k not in VOLATILE} for e in events]


def loopwright_env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), **extra}
    env.pop("LOOPWRIGHT_STORE", None)
    return env


@dataclass
class Workers:
    """`loopwright worker` processes of one test (each stopped at the end)."""

    address: str
    store: str
    queue: str
    log_dir: Path
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self, **env: str) -> subprocess.Popen[bytes]:
        log = (self.log_dir / f"worker{len(self.procs)}.log").open("wb")
        command = [sys.executable, "-m", "loopwright", "worker", "--temporal", self.address,
                   "--store", self.store, "--task-queue", self.queue]  # fmt: skip
        proc = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env=loopwright_env(**env)
        )
        self.procs.append(proc)
        return proc

    def logs(self) -> str:
        return "\n".join(p.read_text() for p in sorted(self.log_dir.glob("worker*.log")))

    def stop_all(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
