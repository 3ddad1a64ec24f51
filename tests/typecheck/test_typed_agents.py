"""What mypy --strict sees of typed agents (`make check` type-checks this file, and runs it).

Each `assert_type` is a claim mypy checks: the agent's type follows `deps_type=` and
`output_type=`, and `run`, `run_sync`, `resume` and `result.output` carry it. Each
`# type: ignore[arg-type]` marks a call mypy must refuse: with `warn_unused_ignores` (on
under --strict) an ignore that is not needed is itself an error, so a call that stopped
being a type error fails the check. The same calls run here, so what mypy refuses is also
refused at run time (a TypeError naming the expected type, before anything runs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, assert_type

import pytest

from loopwright import AgentExecutor, Runtime, tool
from loopwright.agent import ExecutionResult
from loopwright.events import Event
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext


@dataclass
class Shop:
    customer: str
    prices: dict[str, float] = field(default_factory=dict)


@dataclass
class Quote:
    item: str
    price: float


class Row(TypedDict):
    item: str


@tool(effect="read")
def price_of(ctx: ToolContext[Shop], item: str) -> str:
    """The price of an item.

    Args:
        item: the item
    """
    assert_type(ctx.deps, Shop)
    return f"{ctx.deps.prices[item]:.2f} for {ctx.deps.customer}"


@tool(effect="read")
def plain(ctx: ToolContext, item: str) -> str:
    """A tool that reads no deps: a bare ToolContext's are None.

    Args:
        item: the item
    """
    assert_type(ctx.deps, None)
    return item


def replies() -> ScriptedModel:
    return ScriptedModel(
        [
            json.dumps({"thought": "t", "action": "price_of", "action_input": {"item": "pen"}}),
            json.dumps({"thought": "t", "final_answer": {"item": "pen", "price": 2.0}}),
        ]
    )


def typed_agent() -> AgentExecutor[Shop, Quote]:
    return AgentExecutor(replies(), [price_of], deps_type=Shop, output_type=Quote)


def test_the_agent_type_follows_deps_type_and_output_type() -> None:
    model = ScriptedModel([], strict=False)
    assert_type(AgentExecutor(model), AgentExecutor[None, None])
    assert_type(AgentExecutor(model, [plain]), AgentExecutor[None, None])
    assert_type(AgentExecutor(model, deps_type=Shop), AgentExecutor[Shop, None])
    assert_type(AgentExecutor(model, output_type=Quote), AgentExecutor[None, Quote])
    assert_type(AgentExecutor(model, output_type=Row), AgentExecutor[None, Row])
    assert_type(AgentExecutor(model, output_type=list[Quote]), AgentExecutor[None, list[Quote]])
    schema = AgentExecutor(model, output_type={"type": "object"})  # a JSON Schema: Any
    assert_type(schema, AgentExecutor[None, Any])
    assert_type(typed_agent(), AgentExecutor[Shop, Quote])


async def test_run_and_its_output_carry_the_types() -> None:
    result = await typed_agent().run("pen?", deps=Shop("Ada", {"pen": 2.0}))
    assert_type(result, ExecutionResult[Quote])
    assert_type(result.output, Quote | None)  # None until the run completes
    assert result.output == Quote("pen", 2.0)
    assert result.output.price == 2.0
    print(result.output.item)


async def test_output_is_none_until_narrowed() -> None:
    result = await typed_agent().run("pen?", deps=Shop("Ada", {"pen": 2.0}))
    assert result.output.price == 2.0  # type: ignore[union-attr]


def test_run_sync_carries_the_types() -> None:
    result = typed_agent().run_sync("pen?", deps=Shop("Ada", {"pen": 2.0}))
    assert_type(result, ExecutionResult[Quote])


async def test_resume_carries_the_types() -> None:
    agent = AgentExecutor(
        replies(), [price_of], deps_type=Shop, output_type=Quote, approve=True, on_pending="wait"
    )
    shop = Shop("Ada", {"pen": 2.0})
    waiting = await agent.run("pen?", deps=shop)
    gate = waiting.pending_approvals[0].gate_id
    done = await agent.resume(waiting, approve=[gate], deps=shop)
    assert_type(done, ExecutionResult[Quote])
    assert done.output == Quote("pen", 2.0)


async def test_deps_of_another_type_are_refused_by_mypy_and_at_run_time() -> None:
    agent = typed_agent()
    with pytest.raises(TypeError, match=r"deps_type is Shop; give deps=Shop\(...\), not a str"):
        await agent.run("pen?", deps="Ada")  # type: ignore[arg-type]
    seen: list[Event] = []
    with pytest.raises(TypeError, match="deps_type is Shop"):
        async for event in agent.stream("pen?", deps=1):  # type: ignore[arg-type]
            seen.append(event)
    assert seen == []
    model = agent.model
    assert isinstance(model, ScriptedModel) and model.requests == []  # nothing ran


def test_run_sync_refuses_them_too() -> None:
    agent = typed_agent()
    with pytest.raises(TypeError, match="deps_type is Shop"):
        agent.run_sync("pen?", deps=Quote("pen", 1.0))  # type: ignore[arg-type]
    untyped = AgentExecutor(replies(), [plain])  # no deps_type: mypy wants none given;
    result = untyped.run_sync("x", deps=Shop("Ada"))  # type: ignore[arg-type]
    assert result.status == "completed"  # at run time, undeclared deps are not checked
    model = agent.model
    assert isinstance(model, ScriptedModel) and model.requests == []


async def test_the_runtime_takes_the_agents_deps_type(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        with pytest.raises(TypeError, match="deps_type is Shop"):
            runtime.start_agent(typed_agent(), "pen?", deps="Ada")  # type: ignore[misc]
        with pytest.raises(TypeError, match="deps_type is Shop"):
            await runtime.resume_agent(typed_agent(), "run_x", deps=2)  # type: ignore[misc]
        assert store.list_runs() == []
        handle = runtime.start_agent(typed_agent(), "pen?", deps=Shop("Ada", {"pen": 2.0}))
        assert (await handle.wait()).output == Quote("pen", 2.0)
    finally:
        runtime.close()
        store.close()
