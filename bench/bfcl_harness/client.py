"""The harness's side of BFCL: a worker process under bench/.venv-bfcl (worker.py), asked one
JSON line at a time. BFCL's package and its checkers' imports live only in that venv."""

from __future__ import annotations

import json
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parents[1]
BFCL_PYTHON = BENCH / ".venv-bfcl" / "bin" / "python"
WORKER = Path(__file__).resolve().parent / "worker.py"


class BfclUnavailable(RuntimeError):
    """The BFCL venv is not installed (`make bfcl-venv`)."""


@dataclass(frozen=True)
class Question:
    """One BFCL question: its turns (a single-turn question has one), its functions as JSON
    Schema (BFCL's type mapping), and for multi-turn the backends it uses."""

    id: str
    category: str
    turns: list[list[dict[str, str]]]
    tools: list[dict[str, Any]]
    involved_classes: list[str]
    ground_truth: Any


@dataclass(frozen=True)
class Verdict:
    valid: bool
    error_type: str | None
    error: Any


class Bfcl:
    """A worker process; close it when done (or use it as a context manager)."""

    def __init__(self, python: Path = BFCL_PYTHON) -> None:
        if not python.is_file():
            raise BfclUnavailable(f"no {python}: `make bfcl-venv` installs BFCL (once)")
        self._process = subprocess.Popen(
            [str(python), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()  # tools call it from the run's tool threads

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        process = self._process
        assert process.stdin is not None and process.stdout is not None
        with self._lock:
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = process.stdout.readline()
        if not line:
            raise RuntimeError(f"the BFCL worker exited ({process.poll()})")
        reply: dict[str, Any] = json.loads(line)
        if "error" in reply and len(reply) == 1:
            raise RuntimeError(f"BFCL worker: {reply['error']}")
        return reply

    def questions(self, category: str) -> list[Question]:
        entries = self.ask({"op": "load", "category": category})["entries"]
        return [
            Question(
                e["id"], category, e["turns"], e["tools"], e["involved_classes"], e["ground_truth"]
            )
            for e in entries
        ]

    def score(self, question: Question, result: Any, tag: str = "score") -> Verdict:
        """BFCL's verdict on `result`: text its Qwen FC handler reads (single turn), or per
        turn, per step, such texts (multi-turn). `tag` names the backends' instances the
        multi-turn checker makes (one tag per scoring: they keep state)."""
        reply = self.ask(
            {
                "op": "score",
                "category": question.category,
                "id": question.id,
                "result": result,
                "tag": tag,
            }
        )
        return Verdict(reply["valid"], reply.get("error_type"), reply.get("error"))

    def execute(self, tag: str, question_id: str, calls: list[dict[str, Any]]) -> list[str]:
        """Multi-turn: run calls on the question's backends, kept per (tag, question)."""
        reply = self.ask({"op": "execute", "tag": tag, "id": question_id, "calls": calls})
        return [str(r) for r in reply["results"]]

    def read_strict(self, text: str) -> list[dict[str, Any]] | None:
        """BFCL's Qwen FC handler's calls in a reply (None: it cannot read one)."""
        calls: list[dict[str, Any]] | None = self.ask({"op": "read_strict", "text": text})["calls"]
        return calls

    def close(self) -> None:
        process = self._process
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()

    def __enter__(self) -> Bfcl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def tool_call_text(calls: list[dict[str, Any]]) -> str:
    """Calls as BFCL's Qwen FC handler reads them (`<tool_call>` tags, one a call); "" for
    none, which its decoder reads as no call."""
    return "\n".join(
        "<tool_call>\n"
        + json.dumps({"name": c["name"], "arguments": c["arguments"]}, ensure_ascii=False)
        + "\n</tool_call>"
        for c in calls
    )
