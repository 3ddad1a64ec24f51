"""Follow-ups and forks from results of this process (`agent.run(after=..., fork_of=...)`):
the lineage a new run takes from a result's memory (agent/_lineage.py)."""

from __future__ import annotations

from loopwright.agent._lineage import NO_LINEAGE, Lineage, RunMemory
from loopwright.agent._result import ExecutionResult
from loopwright.errors import FollowUpError, ForkError, UsageError


def lineage_of(
    run_id: str,
    *,
    after: ExecutionResult | None = None,
    fork_of: tuple[ExecutionResult, int] | None = None,
) -> Lineage:
    """The lineage of the run `run_id` from results of this process (`agent.run`)."""
    if after is None and fork_of is None:
        return NO_LINEAGE
    if after is not None and fork_of is not None:
        raise UsageError(
            "give after= or fork_of=, not both: a fork follows the turn its run followed"
        )
    if after is not None:
        return _memory_of(after, "after=", FollowUpError).follow_up(after.run_id)
    assert fork_of is not None
    if not isinstance(fork_of, tuple) or len(fork_of) != 2:
        raise ForkError(f"fork_of= takes (result, step), not {fork_of!r}")
    result, step = fork_of
    memory = _memory_of(result, "fork_of=", ForkError)
    return memory.fork(result.run_id, step, result.iterations, run_id)


def _memory_of(result: object, argument: str, error: type[UsageError]) -> RunMemory:
    """The memory a result of this process keeps; `error` says why there is none."""
    if isinstance(result, str):
        raise error(
            f"{argument} got the run id {result!r}: agent.run takes the result itself; a run "
            "in a store is continued through a Runtime (runtime.start_agent(agent, request, "
            f"{argument.rstrip('=')}=...))"
        )
    if not isinstance(result, ExecutionResult):
        raise error(f"{argument} takes an ExecutionResult, not {type(result).__name__}")
    if result._memory is None:
        raise error(
            f"{argument} the result of run {result.run_id} was read back from a store and "
            "holds no conversation: continue it through a Runtime on that store"
        )
    return result._memory
