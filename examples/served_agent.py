"""Your own agent behind loopwright's HTTP API and dashboard: `loopwright serve --agent`.

    loopwright serve --agent examples/served_agent.py:make_agent --store :memory: &
    python examples/served_agent.py http://127.0.0.1:8765

`make_agent` builds the agent (an AgentExecutor; a factory is called once, at start). Its
calls to `archive` need approval and nobody waits at the gate (`on_pending="wait"`), so a run
that reaches one ends `waiting`. Over HTTP this script then: starts a run, sees it wait,
approves the call and resumes the run; asks a follow-up in the same conversation (`after`);
forks the first run after its first step with another request. (A ScriptedModel stands in
for an LLM: its replies are the example's.)
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

import httpx

from loopwright import AgentExecutor, tool
from loopwright.testing import ScriptedModel


@tool(effect="write")
def archive(name: str) -> str:
    """Move a note to the archive.

    Args:
        name: the note's file name
    """
    return f"archived {name}"


def make_agent() -> AgentExecutor[Any, Any]:
    call = {"thought": "archive it", "action": "archive", "action_input": {"name": "notes.txt"}}
    replies = [
        call,
        {"thought": "done", "final_answer": "Archived notes.txt."},
        {"thought": "it was archived", "final_answer": "In the archive, as notes.txt."},
        {"thought": "the fork", "final_answer": "Kept notes.txt where it was."},
    ]
    model = ScriptedModel([json.dumps(r) for r in replies], strict=False)
    return AgentExecutor(model, [archive], approve=["archive"], on_pending="wait")


def settled(client: httpx.Client, run_id: str) -> dict[str, Any]:
    """The run once it is no longer queued or running (polled: 30 s at most)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        run: dict[str, Any] = client.get(f"/api/runs/{run_id}").raise_for_status().json()
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.1)
    raise SystemExit(f"run {run_id} did not settle within 30 s")


def post(client: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = client.post(path, json=body)
    if response.is_error:
        raise SystemExit(f"POST {path}: {response.json()['error']['message']}")
    data: dict[str, Any] = response.json()
    return data


def main(url: str) -> None:
    with httpx.Client(base_url=url, timeout=30) as client:
        started = post(client, "/api/runs", {"request": "Archive my old notes"})
        run = settled(client, started["run_id"])
        gate = run["pending_gates"][0]
        print(f"1. {run['status']}: {gate['message']}")
        post(client, f"/api/runs/{run['run_id']}/gates/{gate['request_id']}", {"approve": True})
        post(client, f"/api/runs/{run['run_id']}/resume", {})
        run = settled(client, run["run_id"])
        print(f"2. {run['status']}: {run['answer']}")

        turn = post(client, "/api/runs", {"request": "Where is it now?", "after": run["run_id"]})
        turn = settled(client, turn["run_id"])
        print(f"3. turn {len(turn['turns'])} {turn['status']}: {turn['answer']}")

        fork = post(client, f"/api/runs/{run['run_id']}/fork", {"at": 0, "request": "Keep it"})
        fork = settled(client, fork["run_id"])
        print(f"4. fork at step {fork['fork_of']['step']} {fork['status']}: {fork['answer']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8765")
