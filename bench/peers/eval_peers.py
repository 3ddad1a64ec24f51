"""The tool-use evaluation suite (evals/) through peer frameworks, against one local
OpenAI-compatible server (llama.cpp's), with the same model for every framework.

Runs under the peers' virtualenv (bench/.venv-peers, with loopwright installed there with
`pip install -e . --no-deps` so the suite, the tools and the checker are loopwright's own):

    bench/.venv-peers/bin/python bench/peers/eval_peers.py --base-url http://127.0.0.1:PORT/v1

What is the same for every framework:
- the tasks, the workspace files, the step budget (the task's `max_iterations`, 8 unless set);
- the tools: every framework gets each tool's name, description and JSON Schema exactly as
  loopwright builds them, and a call goes through the same code (loopwright's argument check,
  then the Python function; the result rendered to text the way loopwright renders it);
- the checker: `Expectation.failures` from loopwright.evals, fed the peer's final answer,
  whether the run ended normally, and the tools it executed, in order;
- temperature 0, no other sampling setting (no max_tokens: loopwright sends none either).

What is each framework's own: its standard OpenAI-compatible model class, its default agent
loop and prompt, and its standard way of telling the model that a tool failed (smolagents:
raise; Pydantic AI: ModelRetry; LangChain: ToolException with handle_tool_error=True; OpenAI
Agents SDK: FunctionTool's default failure message).

Each (framework, task) runs in its own process with a wall-clock limit, so a stuck run is
killed and cannot leak state (the flaky tool's counter) into the next task. After a kill the
parent waits for the server to finish the abandoned request before starting the next task.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from counting_proxy import CountingProxy

ROOT = Path(__file__).resolve().parents[2]
EVALS = ROOT / "evals"
DEFAULT_OUT = ROOT / "bench" / "results" / "eval-peers.json"
FRAMEWORKS = ("smolagents", "pydantic_ai", "langgraph", "openai_agents")
LABELS = {
    "smolagents": "smolagents",
    "pydantic_ai": "Pydantic AI",
    "langgraph": "LangGraph",
    "openai_agents": "OpenAI Agents SDK",
}
MODEL_NAME = "qwen"
API_KEY = "not-needed"  # the local server ignores it; the clients insist on one
ERROR_CHARS = 400

Call = Callable[[str, dict[str, Any]], str]


# --------------------------------------------------------------------------------------
# The shared tool layer: the same check, function and rendering as loopwright's executor.
# --------------------------------------------------------------------------------------


class Toolbox:
    """The task's loopwright tools, called the way loopwright's executor calls them."""

    def __init__(self, tools: list[Any], workspace: Path, run_id: str) -> None:
        from loopwright.tools import ToolContext

        self.tools = {t.name: t for t in tools}
        self.ctx = ToolContext(run_id=run_id, workspace=workspace)
        self.calls: list[str] = []

    def call(self, name: str, arguments: dict[str, Any]) -> str:
        """Run one call; raises loopwright's ToolError for a failure (the caller maps it)."""
        from loopwright.errors import ToolError
        from loopwright.tools._executor import render_output

        self.calls.append(name)
        tool = self.tools[name]
        problem = tool.check_arguments(arguments)
        if problem is not None:
            raise ToolError(f"{problem}. {tool.usage_hint}")
        try:
            value = asyncio.run(tool.invoke(arguments, self.ctx))
        except ToolError:
            raise
        except Exception as exc:  # a crash in the function: same text loopwright shows
            raise ToolError(f"{type(exc).__name__}: {exc}") from exc
        return render_output(value)


def _json_type(prop: dict[str, Any]) -> tuple[str, bool]:
    kind = prop.get("type", "any")
    if isinstance(kind, list):
        others = [k for k in kind if k != "null"]
        return (others[0] if others else "null"), "null" in kind
    return str(kind), False


# --------------------------------------------------------------------------------------
# One runner per framework: (task, toolbox, base_url) -> outcome fields.
# --------------------------------------------------------------------------------------


def run_smolagents(task: Any, box: Toolbox, base_url: str) -> dict[str, Any]:
    from smolagents import OpenAIModel, ToolCallingAgent
    from smolagents import Tool as SmolTool

    def make(t: Any) -> SmolTool:
        required = set(t.parameters.get("required") or ())
        inputs = {}
        for name, prop in t.parameters["properties"].items():
            kind, nullable = _json_type(prop)
            spec: dict[str, Any] = {"type": kind, "description": prop.get("description", name)}
            if nullable or name not in required:
                spec["nullable"] = True
            inputs[name] = spec

        def forward(self: Any, **kwargs: Any) -> str:
            return box.call(t.name, {k: v for k, v in kwargs.items() if v is not None})

        attributes = {
            "name": t.name,
            "description": t.description,
            "inputs": inputs,
            "output_type": "string",
            "skip_forward_signature_validation": True,
            "forward": forward,
        }
        return type(f"Tool_{t.name}", (SmolTool,), attributes)()

    # flatten_messages_as_text: llama.cpp's server refuses a system message whose content is
    # a list of parts (HTTP 500), which is how smolagents sends every message by default
    model = OpenAIModel(
        model_id=MODEL_NAME,
        api_base=base_url,
        api_key=API_KEY,
        flatten_messages_as_text=True,
        temperature=0,
    )
    agent = ToolCallingAgent(
        tools=[make(t) for t in box.tools.values()],
        model=model,
        max_steps=task.max_iterations,
        verbosity_level=-1,
    )
    result = agent.run(task.request, return_full_result=True)
    steps = [s for s in result.steps if s.get("step_number") is not None]
    errors = [str(s["error"])[:ERROR_CHARS] for s in steps if s.get("error")]
    return {
        "answer": None if result.output is None else str(result.output),
        "completed": result.state == "success",
        "reason": "" if result.state == "success" else result.state,
        "steps": len(steps),
        "step_errors": errors,
    }


def run_pydantic_ai(task: Any, box: Toolbox, base_url: str) -> dict[str, Any]:
    from pydantic_ai import Agent, ModelRetry, Tool
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.usage import UsageLimits

    from loopwright.errors import ToolError

    def make(t: Any) -> Tool[None]:
        def function(**kwargs: Any) -> str:
            try:
                return box.call(t.name, kwargs)
            except ToolError as exc:
                raise ModelRetry(str(exc)) from exc

        return Tool.from_schema(function, t.name, t.description, t.parameters)

    model = OpenAIChatModel(MODEL_NAME, provider=OpenAIProvider(base_url=base_url, api_key=API_KEY))
    agent: Agent[None, str] = Agent(
        model, tools=[make(t) for t in box.tools.values()], model_settings={"temperature": 0}
    )
    limits = UsageLimits(request_limit=task.max_iterations)
    result = agent.run_sync(task.request, usage_limits=limits)
    return {
        "answer": str(result.output),
        "completed": True,
        "reason": "",
        "steps": result.usage().requests,
    }


def run_langgraph(task: Any, box: Toolbox, base_url: str) -> dict[str, Any]:
    from langchain_core.messages import AIMessage
    from langchain_core.tools import StructuredTool, ToolException
    from langchain_openai import ChatOpenAI
    from langgraph.errors import GraphRecursionError
    from langgraph.prebuilt import create_react_agent

    from loopwright.errors import ToolError

    def make(t: Any) -> StructuredTool:
        def function(**kwargs: Any) -> str:
            try:
                return box.call(t.name, kwargs)
            except ToolError as exc:
                raise ToolException(str(exc)) from exc

        return StructuredTool(
            name=t.name,
            description=t.description,
            args_schema=t.parameters,
            func=function,
            handle_tool_error=True,
        )

    llm = ChatOpenAI(model=MODEL_NAME, base_url=base_url, api_key=API_KEY, temperature=0)
    agent = create_react_agent(llm, [make(t) for t in box.tools.values()])
    # one model turn and one tool turn per step, plus the final answer
    config = {"recursion_limit": 2 * task.max_iterations + 1}
    try:
        state = agent.invoke({"messages": [("user", task.request)]}, config)
    except GraphRecursionError as exc:
        return {"answer": None, "completed": False, "reason": str(exc)[:200], "steps": None}
    replies = [m for m in state["messages"] if isinstance(m, AIMessage)]
    answer = replies[-1].content if replies else None
    return {
        "answer": answer if isinstance(answer, str) else json.dumps(answer),
        "completed": True,
        "reason": "",
        "steps": len(replies),
    }


def run_openai_agents(task: Any, box: Toolbox, base_url: str) -> dict[str, Any]:
    from agents import (
        Agent,
        FunctionTool,
        MaxTurnsExceeded,
        ModelSettings,
        OpenAIChatCompletionsModel,
        Runner,
        set_tracing_disabled,
    )
    from agents.tool import default_tool_error_function
    from openai import AsyncOpenAI

    from loopwright.errors import ToolError

    set_tracing_disabled(True)

    def make(t: Any) -> FunctionTool:
        async def invoke(ctx: Any, raw: str) -> str:
            try:
                arguments = json.loads(raw) if raw else {}
                return await asyncio.to_thread(box.call, t.name, arguments)
            except (ToolError, ValueError) as exc:
                # what @function_tool does by default with a failing tool
                return default_tool_error_function(ctx, exc)

        return FunctionTool(
            name=t.name,
            description=t.description,
            params_json_schema=t.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,
        )

    client = AsyncOpenAI(base_url=base_url, api_key=API_KEY)
    model = OpenAIChatCompletionsModel(model=MODEL_NAME, openai_client=client)
    agent = Agent(
        name="eval",
        model=model,
        tools=[make(t) for t in box.tools.values()],
        model_settings=ModelSettings(temperature=0),
    )
    try:
        result = Runner.run_sync(agent, task.request, max_turns=task.max_iterations)
    except MaxTurnsExceeded as exc:
        return {"answer": None, "completed": False, "reason": str(exc)[:200], "steps": None}
    return {
        "answer": None if result.final_output is None else str(result.final_output),
        "completed": True,
        "reason": "",
        "steps": len(result.raw_responses),
    }


RUNNERS: dict[str, Callable[[Any, Toolbox, str], dict[str, Any]]] = {
    "smolagents": run_smolagents,
    "pydantic_ai": run_pydantic_ai,
    "langgraph": run_langgraph,
    "openai_agents": run_openai_agents,
}


# --------------------------------------------------------------------------------------
# One task in this process (the child), then the checker.
# --------------------------------------------------------------------------------------


def run_one(framework: str, task_id: str, base_url: str) -> dict[str, Any]:
    from loopwright.evals import load_suite

    suite = load_suite(EVALS)
    task = next(t for t in suite.tasks if t.id == task_id)
    with tempfile.TemporaryDirectory(prefix=f"eval-{framework}-{task.id}-") as tmp:
        workspace = Path(tmp)
        for name, text in task.files.items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text, encoding="utf-8")
        box = Toolbox(suite.tools_for(task), workspace, f"{framework}-{task.id}-{uuid.uuid4()}")
        started = time.perf_counter()
        try:
            fields = RUNNERS[framework](task, box, base_url)
            error = ""
        except Exception as exc:
            fields = {"answer": None, "completed": False, "reason": "", "steps": None}
            error = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
            traceback.print_exc(file=sys.stderr)
        wall = time.perf_counter() - started
        # the checker reads an ExecutionResult; these are the attributes it uses
        result = SimpleNamespace(
            success=fields["completed"] and not error,
            status="completed" if fields["completed"] and not error else "failed",
            reason=fields.get("reason") or error,
            message="",
            answer=fields["answer"],
            steps=[SimpleNamespace(tool_name=name) for name in box.calls],
        )
        problems = task.expect.failures(result, workspace)  # type: ignore[arg-type]
    return {
        "framework": framework,
        "id": task.id,
        "level": task.level,
        "passed": not problems,
        "problems": problems,
        "tool_calls": box.calls,
        "steps": fields.get("steps"),
        "wall_s": round(wall, 3),
        "answer": fields["answer"],
        "error": error,
        "step_errors": fields.get("step_errors", []),
    }


# --------------------------------------------------------------------------------------
# The parent: every (framework, task) in a child process with a wall-clock limit.
# --------------------------------------------------------------------------------------


def wait_for_idle_server(base_url: str) -> None:
    """A killed child's request may still be generating; a 1-token request queues behind it."""
    import httpx

    body = {"model": MODEL_NAME, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    with contextlib.suppress(httpx.HTTPError):
        httpx.post(f"{base_url}/chat/completions", json=body, timeout=900)


def run_in_child(
    framework: str,
    task: Any,
    base_url: str,
    timeout_s: float,
    upstream: str | None = None,
    cancel: Callable[[], object] | None = None,
) -> dict[str, Any]:
    """One (framework, task) in a child process; after a kill, `cancel` its request still
    running (the counting proxy closes its upstream connection, so the server stops
    generating), then wait until the server (`upstream`, straight) is idle."""
    command = [sys.executable, __file__, "--child", framework, task.id, "--base-url", base_url]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        wall = time.perf_counter() - started
        if cancel is not None:
            cancel()
        wait_for_idle_server(upstream or base_url)
        return {
            "framework": framework,
            "id": task.id,
            "level": task.level,
            "passed": False,
            "problems": [f"timed out after {timeout_s:g}s"],
            "tool_calls": [],
            "steps": None,
            "wall_s": round(wall, 3),
            "answer": None,
            "error": f"timeout after {timeout_s:g}s",
            "step_errors": [],
        }
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {
            "framework": framework,
            "id": task.id,
            "level": task.level,
            "passed": False,
            "problems": ["child process failed"],
            "tool_calls": [],
            "steps": None,
            "wall_s": round(time.perf_counter() - started, 3),
            "answer": None,
            "error": done.stderr.strip()[-ERROR_CHARS:] or "no output",
            "step_errors": [],
        }
    outcome: dict[str, Any] = json.loads(lines[-1])
    return outcome


def summarise(outcomes: list[dict[str, Any]]) -> dict[str, Any]:
    levels: dict[str, dict[str, int]] = {}
    for o in outcomes:
        entry = levels.setdefault(str(o["level"]), {"passed": 0, "total": 0})
        entry["passed"] += int(o["passed"])
        entry["total"] += 1
    count = len(outcomes) or 1
    return {
        "passed": sum(int(o["passed"]) for o in outcomes),
        "total": len(outcomes),
        "success_rate": sum(int(o["passed"]) for o in outcomes) / count,
        "wall_s": round(sum(o["wall_s"] for o in outcomes), 1),
        "by_level": dict(sorted(levels.items(), key=lambda kv: int(kv[0]))),
    }


def markdown_table(results: dict[str, dict[str, Any]], levels: dict[int, str]) -> str:
    """Rows: frameworks; columns: overall and each level, as passed/total."""
    heads = ["framework", "overall"] + [f"L{k}" for k in sorted(levels)] + ["wall s"]
    rows = ["| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
    for name, entry in results.items():
        s = entry["summary"]
        cells = [name, f"**{s['success_rate']:.0%}** ({s['passed']}/{s['total']})"]
        for k in sorted(levels):
            lv = s["by_level"].get(str(k))
            cells.append(f"{lv['passed']}/{lv['total']}" if lv else "-")
        cells.append(f"{s['wall_s']:.0f}")
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


def progress_clock(frameworks: list[str], tasks: list[Any], results: dict[str, Any]) -> Any:
    """Done/total over every (framework, task) still to run, elapsed and an estimate."""
    from loopwright.evals._progress import ProgressClock

    ids = {t.id for t in tasks}
    kept = sum(
        1
        for framework in frameworks
        for o in results.get(LABELS[framework], {}).get("tasks", [])
        if o["id"] in ids
    )
    return ProgressClock(len(frameworks) * len(tasks) - kept, unit="runs")


def interleaved(tasks: list[Any]) -> list[Any]:
    """Round-robin over the levels (L1, L2, ... L7, L1, ...): a run cut short by the clock
    still has every level in it."""
    by_level: dict[int, list[Any]] = {}
    for task in tasks:
        by_level.setdefault(task.level, []).append(task)
    rounds = itertools.zip_longest(*by_level.values())
    return [task for batch in rounds for task in batch if task is not None]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", required=True, help="e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--frameworks", default="smolagents,pydantic_ai,langgraph")
    parser.add_argument("--only", default="", help="comma-separated task ids")
    parser.add_argument("--timeout", type=float, default=120.0, help="per-task wall limit, s")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument(
        "--resume", action="store_true", help="keep the outcomes already in --out, run the rest"
    )
    parser.add_argument("--child", nargs=2, metavar=("FRAMEWORK", "TASK"), help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1], args.base_url)), flush=True)
        return

    from loopwright.evals import load_suite

    suite = load_suite(EVALS)
    only = {i.strip() for i in args.only.split(",") if i.strip()}
    tasks = interleaved([t for t in suite.tasks if not only or t.id in only])
    frameworks = [f.strip() for f in args.frameworks.split(",") if f.strip()]
    unknown = [f for f in frameworks if f not in RUNNERS]
    if unknown:
        parser.error(f"unknown frameworks {unknown}; known: {', '.join(FRAMEWORKS)}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "base_url": args.base_url,
        "model": MODEL_NAME,
        "timeout_s": args.timeout,
        "complete": False,
        "results": {},
    }
    if args.resume and out.is_file():
        report["results"] = json.loads(out.read_text(encoding="utf-8"))["results"]
    pace = progress_clock(frameworks, tasks, report["results"])
    with CountingProxy(args.base_url) as proxy:
        run_all(frameworks, tasks, args, proxy, pace, report, out)
    report["complete"] = True
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print()
    print(markdown_table(report["results"], suite.levels))
    print(f"\nJSON written to {out}")


def run_all(
    frameworks: list[str],
    tasks: list[Any],
    args: Any,
    proxy: CountingProxy,
    pace: Any,
    report: dict[str, Any],
    out: Path,
) -> None:
    """Every (framework, task) not kept, through the counting proxy (model calls, tokens)."""
    for framework in frameworks:
        kept = report["results"].get(LABELS[framework], {}).get("tasks", [])
        outcomes: list[dict[str, Any]] = [o for o in kept if o["id"] in {t.id for t in tasks}]
        done = {o["id"] for o in outcomes}
        for task in tasks:
            if task.id in done:
                continue
            proxy.take()  # a request abandoned by a killed child is not this task's
            outcome = run_in_child(
                framework, task, proxy.url, args.timeout, args.base_url, proxy.cancel_in_flight
            )
            outcome.update(proxy.take())
            outcomes.append(outcome)
            pace.advance()
            mark = "ok  " if outcome["passed"] else "FAIL"
            why = "" if outcome["passed"] else "; ".join(outcome["problems"])[:110]
            line = f"{mark} {framework:13} {task.id:24} {outcome['wall_s']:6.1f}s"
            print(f"{line} [{pace.text()}] {why}", flush=True)
            report["results"][LABELS[framework]] = {
                "framework": framework,
                "summary": summarise(outcomes),
                "tasks": outcomes,
            }
            out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
