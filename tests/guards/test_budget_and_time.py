"""Token and cost budgets (checked before each model call) and wall-clock limits (MockClock)."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from guard_helpers import SlowModel, call

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.clock import MockClock
from loopwright.guards import CostLedger
from loopwright.messages import ModelRequest, ModelResponse, Usage
from loopwright.testing import ScriptedModel
from loopwright.tools import tool


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: what to look up
    """
    return f"value of {key}"


def costly(text: str, tokens_in: int, tokens_out: int) -> ModelResponse:
    return ModelResponse(text=text, usage=Usage(tokens_in, tokens_out), model="scripted")


def lookups(count: int, tokens_in: int = 1000, tokens_out: int = 100) -> list[Any]:
    return [costly(call("lookup", key=f"k{i}"), tokens_in, tokens_out) for i in range(count)]


async def test_token_budget_stops_before_the_call_that_would_exceed_it() -> None:
    model = ScriptedModel([*lookups(5), costly('{"final_answer": "x"}', 1000, 100)], strict=False)
    options = AgentOptions(max_tokens_total=3000)
    result = await AgentExecutor(model, [lookup], options=options).run("spend")
    assert result.status == "stopped" and result.reason == "budget"
    # two calls used 2,200 tokens; a third would need ~1,100 more: it is never made
    assert len(model.requests) == 2
    assert result.usage.total_tokens == 2200 <= 3000


async def test_run_within_its_token_budget_finishes() -> None:
    replies = [*lookups(2), costly('{"final_answer": "done"}', 1000, 100)]
    model = ScriptedModel(replies)
    result = await AgentExecutor(
        model, [lookup], options=AgentOptions(max_tokens_total=10_000)
    ).run("spend a little")
    assert result.status == "completed" and result.usage.total_tokens == 3300


async def test_cost_budget_uses_a_user_extended_price_table() -> None:
    model = ScriptedModel(lookups(10), name="acme:big-model", strict=False)
    prices = {"acme:big-model": (10.0, 30.0)}  # USD per million tokens in / out
    agent = AgentExecutor(model, [lookup], options=AgentOptions(max_cost=0.05), prices=prices)
    result = await agent.run("spend money")
    assert result.status == "stopped" and result.reason == "budget"
    per_call = (1000 * 10.0 + 100 * 30.0) / 1_000_000  # $0.013
    assert len(model.requests) == 3  # a fourth call would bring it to ~$0.052
    assert abs(result.cost - 3 * per_call) < 1e-9
    assert "$0.05" in (result.message or "")


async def test_cost_budget_does_not_stop_a_free_model() -> None:
    replies = [*lookups(3), costly('{"final_answer": "free"}', 1000, 100)]
    result = await AgentExecutor(
        ScriptedModel(replies), [lookup], options=AgentOptions(max_cost=0.0001)
    ).run("local model")
    assert result.status == "completed" and result.cost == 0.0


def test_price_table_keeps_defaults_when_extended() -> None:
    defaults = CostLedger().prices
    ledger = CostLedger(prices={**defaults, "acme:x": (1.0, 2.0)})
    ledger.record("acme:x", Usage(1_000_000, 1_000_000))
    ledger.record("openai:gpt-4o-mini", Usage(1_000_000, 0))
    assert ledger.total_cost == 3.0 + defaults["openai:gpt-4o-mini"][0]
    assert ledger.usage_by_model["acme:x"] == Usage(1_000_000, 1_000_000)


async def test_wall_clock_stops_a_run_whose_model_is_slow(clock: MockClock) -> None:
    scripted = ScriptedModel([call("lookup", key=f"k{i}") for i in range(10)], strict=False)
    model = SlowModel(scripted, clock, seconds=25)
    agent = AgentExecutor(model, [lookup], options=AgentOptions(timeout_s=60), clock=clock)
    result = await agent.run("slow")
    assert result.status == "stopped" and result.reason == "timeout"
    assert len(scripted.requests) == 3  # 25 s, 50 s, 75 s: no fourth call after the limit


async def test_wall_clock_does_not_stop_a_fast_run(clock: MockClock) -> None:
    scripted = ScriptedModel([call("lookup", key="a"), '{"final_answer": "quick"}'])
    model = SlowModel(scripted, clock, seconds=5)
    agent = AgentExecutor(model, [lookup], options=AgentOptions(timeout_s=60), clock=clock)
    result = await agent.run("fast")
    assert result.status == "completed"


async def test_wall_clock_counts_slow_tools(clock: MockClock) -> None:
    @tool
    def slow_build(target: str) -> str:
        """Build a target (takes 40 simulated seconds).

        Args:
            target: what to build
        """
        clock.advance(40)
        return f"built {target}"

    model = ScriptedModel([call("slow_build", target=t) for t in "abcd"], strict=False)
    agent = AgentExecutor(model, [slow_build], options=AgentOptions(timeout_s=100), clock=clock)
    result = await agent.run("build")
    assert result.reason == "timeout" and len(result.steps) == 3


class HangingModel:
    """A model whose call never returns (a stuck server)."""

    name = "hanging"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


async def test_per_iteration_timeout_stops_a_hung_model_call() -> None:
    options = AgentOptions(iteration_timeout_s=0.01)
    result = await AgentExecutor(HangingModel(), options=options).run("hang")
    assert result.status == "stopped" and result.reason == "iteration_timeout"
    assert result.iterations == 1


async def test_whole_run_timeout_cuts_a_hung_model_call() -> None:
    options = AgentOptions(timeout_s=0.01)
    result = await AgentExecutor(HangingModel(), options=options).run("hang")
    assert result.status == "stopped" and result.reason == "timeout"
