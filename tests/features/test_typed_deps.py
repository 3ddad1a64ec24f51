"""Typed dependencies at run time: each run's tools get the deps its caller gave (a
sub-agent its lead's), deps of the wrong type are refused before anything runs, a tool or
sub-agent that reads other deps than the agent's is refused when the agent is made, and
deps are never recorded: a resumed run gets them again from its caller."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypedDict, runtime_checkable

import pytest

from loopwright import AgentExecutor, Runtime, tool
from loopwright.errors import ConfigurationError
from loopwright.events import Event, encode_event
from loopwright.runtime import resume_run
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel
from loopwright.tools import ToolContext

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
import typed_deps


@dataclass
class Shop:
    customer: str
    seen: list[str] = field(default_factory=list)


class LocalShop(Shop):
    pass


@dataclass
class Other:
    name: str


@tool(effect="read")
def whose(ctx: ToolContext[Shop]) -> str:
    """Who the run is for."""
    ctx.deps.seen.append(ctx.call_id)
    return f"for {ctx.deps.customer}"


@tool(effect="read")
def other(ctx: ToolContext[Other]) -> str:
    """Reads other deps."""
    return ctx.deps.name


def call(name: str, **arguments: Any) -> str:
    return json.dumps({"thought": "go", "action": name, "action_input": arguments})


def final(answer: str = "ok") -> str:
    return json.dumps({"thought": "done", "final_answer": answer})


async def test_each_run_gets_its_own_deps() -> None:
    model = ScriptedModel([call("whose"), final()] * 2, strict=False)
    agent = AgentExecutor(model, [whose], deps_type=Shop)
    ada, bob = Shop("Ada"), Shop("Bob")
    first = await agent.run("who?", deps=ada)
    second = await agent.run("who?", deps=bob)
    assert first.steps[0].result == "for Ada" and second.steps[0].result == "for Bob"
    assert ada.seen == ["call_1_0"] and bob.seen == ["call_1_0"]  # the very objects given


async def test_a_sub_agent_gets_its_leads_deps() -> None:
    child = AgentExecutor(
        ScriptedModel([call("whose"), final("child saw it")]), [whose], deps_type=Shop
    )
    lead = AgentExecutor(
        ScriptedModel([call("helper", request="who?"), final()]),
        [child.as_tool("helper", "Finds out who.")],
        deps_type=LocalShop,  # a subclass of the sub-agent's deps_type: it can read them
    )
    shop = LocalShop("Cy")
    result = await lead.run("who?", deps=shop)
    assert result.success and result.steps[0].result == "child saw it" and len(shop.seen) == 1


async def test_wrong_or_missing_deps_are_a_type_error_before_anything_runs() -> None:
    seen: list[Event] = []
    model = ScriptedModel([call("whose"), final()])
    agent = AgentExecutor(model, [whose], deps_type=Shop)
    with pytest.raises(TypeError, match=r"deps_type is Shop; give deps=Shop\(...\), not a Other"):
        await agent.run("who?", deps=Other("x"), on_event=seen.append)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not no deps \(None\)"):
        await agent.run("who?", on_event=seen.append)
    assert seen == [] and model.requests == []


def test_tools_and_sub_agents_that_read_other_deps_are_refused_when_the_agent_is_made() -> None:
    model = ScriptedModel([], strict=False)
    with pytest.raises(
        ConfigurationError,
        match=r"tool 'other' \(ctx: ToolContext\[Other\]\) reads deps of another type than this agent's deps_type Shop",
    ):
        AgentExecutor(model, [whose, other], deps_type=Shop)
    with pytest.raises(
        ConfigurationError,
        match=r"tool 'whose' \(ctx: ToolContext\[Shop\]\) reads deps, and this agent has no deps_type: give it deps_type=Shop",
    ):
        AgentExecutor(model, [whose])
    child = AgentExecutor(model, [whose], deps_type=Shop)
    with pytest.raises(
        ConfigurationError,
        match=r"sub-agent tool 'helper' \(deps_type=Shop\) reads deps of another type than this agent's deps_type Other",
    ):
        AgentExecutor(model, [child.as_tool("helper", "h")], deps_type=Other)
    with pytest.raises(ConfigurationError, match="deps_type must be a type"):
        AgentExecutor(model, deps_type=Shop("Ada"))  # type: ignore[call-overload]
    assert AgentExecutor(model, [whose], deps_type=LocalShop).deps_type is LocalShop


class HasName(Protocol):
    name: str


@runtime_checkable
class Named(Protocol):
    name: str


class Row(TypedDict):
    name: str


def check_deps(deps_type: Any, deps: Any) -> None:
    """What every way to run an agent of `deps_type` checks first."""
    AgentExecutor(ScriptedModel([]), deps_type=deps_type).check_deps(deps)


@pytest.mark.parametrize(
    ("deps_type", "good", "bad"),
    [
        (int | None, None, "1"),
        (list[int], [1], (1,)),
        (Row, {"name": "x"}, ["x"]),
        (Named, Other("x"), 3),
        (Literal["eu", "us"], "eu", "uk"),
        (Annotated[Shop, "the shop"], Shop("Ada"), Other("x")),
    ],
    ids=["union", "generic", "typeddict", "runtime-protocol", "literal", "annotated"],
)
def test_typing_forms_are_checked_as_far_as_run_time_can(
    deps_type: Any, good: Any, bad: Any
) -> None:
    check_deps(deps_type, good)
    with pytest.raises(TypeError, match="give deps="):
        check_deps(deps_type, bad)


def test_a_form_run_time_cannot_check_takes_any_deps() -> None:
    check_deps(HasName, 3)  # a Protocol that is not runtime_checkable: mypy's to check
    check_deps(Any, object())


async def test_deps_are_not_recorded_and_a_resumed_run_gets_them_again(tmp_path: Path) -> None:
    def agent(replies: list[str]) -> AgentExecutor[Shop, None]:
        return AgentExecutor(
            ScriptedModel(replies), [whose], deps_type=Shop, approve=True, on_pending="wait"
        )

    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        first = Shop("Ada-3b9f")
        result = await runtime.start_agent(
            agent([call("whose"), final()]), "who?", deps=first
        ).wait()
        assert result.status == "waiting" and first.seen == []
        with pytest.raises(TypeError, match="not no deps"):
            await runtime.resume_agent(agent([call("whose"), final()]), result.run_id)  # no deps
        await runtime.approve(result.run_id, None, True, "api:ann")
        second = Shop("Bob-7c1d")
        done = await (
            await runtime.resume_agent(agent([call("whose"), final()]), result.run_id, deps=second)
        ).wait()
        assert done.success and done.steps[0].result == "for Bob-7c1d" and len(second.seen) == 1
        stored = "".join(encode_event(e) for e in store.events(result.run_id))
        assert "Ada-3b9f" not in stored and "Bob-7c1d" in stored  # only as the tool's output
    finally:
        runtime.close()
        store.close()


async def test_resume_run_takes_the_agent_and_its_deps_again(tmp_path: Path) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store)
    try:
        waiting = AgentExecutor(
            ScriptedModel([call("whose"), final()]), [whose], deps_type=Shop, approve=True,
            on_pending="wait",
        )  # fmt: skip
        result = await runtime.start_agent(waiting, "who?", deps=Shop("Ada")).wait()
        await runtime.approve(result.run_id, None, True, "api:ann")
    finally:
        runtime.close()
    again = AgentExecutor(
        ScriptedModel([call("whose"), final("done")]), [whose], deps_type=Shop, approve=True,
        on_pending="wait",
    )  # fmt: skip
    done = await resume_run(store, result.run_id, agent=again, deps=Shop("Bob"))
    assert done.success and done.answer == "done" and done.steps[0].result == "for Bob"
    store.close()


async def test_example_types_the_deps_and_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    await typed_deps.main()
    assert capsys.readouterr().out.splitlines() == [
        "tool saw: kettle: 24.50 EUR for Ada",
        "quote: kettle at 24.50",
        "wrong deps: deps: this agent's deps_type is Shop; give deps=Shop(...), not a str",
    ]
