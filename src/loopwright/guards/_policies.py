"""The built-in stop policies: iterations, repetition, wall clock, no progress."""

from __future__ import annotations

from loopwright.guards._policy import BasePolicy, GuardState, Nudge, Stop


class MaxIterations(BasePolicy):
    """Stop when the iteration limit is reached without a final answer.

    The limit is hard: it bounds the model calls too (a corrective retry is a call), so a
    run never makes more model calls than its limit (seed 001's "Hard `max_steps` limit").
    """

    def before_model_call(self, state: GuardState) -> Stop | None:
        used = max(state.iteration, state.model_calls) if state.hard_limit else state.iteration
        if used >= state.max_iterations:
            return limit_stop(state)
        return None


def limit_stop(state: GuardState) -> Stop:
    """The stop of a run that has used its iteration limit."""
    calls = ""
    if state.model_calls > state.iteration:
        calls = f" and {state.model_calls} model calls"
    return Stop(
        "max_iterations",
        f"Stopped after {state.iteration} iterations{calls} without a final answer "
        f"(limit {state.max_iterations}).",
    )


class Repetition(BasePolicy):
    """The same tool with the same arguments `threshold` times in a row stops the run.

    One call short of the threshold, the model gets a nudge to change course. With
    `cycles` (revision 7 on), two calls that alternate (`a, b, a, b`) stop the run too when
    their results are the ones already seen (nudged at `a, b, a`): the 1.5B model, told
    "ok" by a tool, went on calling two tools in turn until the iteration limit, a loop the
    in-a-row count never sees.
    """

    def __init__(self, threshold: int = 3, *, cycles: bool = False) -> None:
        self.threshold = max(2, threshold)
        self.cycles = cycles

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None:
        calls = state.call_signatures
        if not calls:
            return None
        last = calls[-1]
        run = 0
        for signature in reversed(calls):
            if signature != last:
                break
            run += 1
        if run >= self.threshold:
            return Stop(
                "repetition",
                f"Stopped: the same call {last} was made {run} times in a row.",
            )
        if run == self.threshold - 1:
            return Nudge(
                f"Note: you have made the same call {last} {run} times in a row and got the "
                "same kind of result. Do not repeat it: use the observation above, try "
                "something different, or give your final answer."
            )
        return self._cycle(state) if self.cycles and run == 1 else None

    @staticmethod
    def _cycle(state: GuardState) -> Stop | Nudge | None:
        """Two calls in turn (`a, b, a` or `a, b, a, b`) whose last round brought nothing new."""
        calls = state.call_signatures
        if len(calls) < 3 or calls[-3] != calls[-1] or calls[-2] == calls[-1]:
            return None
        if not state.new_observation or state.new_observation[-1]:
            return None  # the repeated call told the model something new
        pair = f"{calls[-2]} and {calls[-1]}"
        if len(calls) >= 4 and calls[-4] == calls[-2]:
            return Stop("repetition", f"Stopped: the calls {pair} were made in turn, twice.")
        return Nudge(
            f"Note: you have made the call {calls[-1]} again, after {calls[-2]}, and got the "
            "same result as before. Do not repeat them: if these results answer the task, "
            "give your final answer; else call something different."
        )


class UnknownTools(BasePolicy):
    """`limit` tool calls in a row that name tools the run does not have stop the run
    (`no_progress`: with `last_turn`, the model is then asked for its answer).

    Each such call's observation already lists the tools there are; a model that still
    invents a third is lost, and one that alternates two invented tools escapes
    `Repetition`: asked what blue and yellow make, the 1.5B model called `color`,
    `read`, `color`, ... until the iteration limit, 8 model calls instead of 4.
    """

    def __init__(self, limit: int = 3) -> None:
        self.limit = max(1, limit)

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None:
        recent = state.unknown_tool_calls[-self.limit :]
        if len(recent) < self.limit or not all(recent):
            return None
        names = ", ".join(c.tool_name for c in state.call_signatures[-self.limit :])
        return Stop(
            "no_progress",
            f"Stopped: the last {self.limit} tool calls named tools this run does not have "
            f"({names}).",
        )


class WallClock(BasePolicy):
    """Stop when the run has used its wall-clock allowance."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s

    def before_model_call(self, state: GuardState) -> Stop | None:
        elapsed = state.now - state.started_at
        if elapsed >= self.timeout_s:
            return Stop(
                "timeout",
                f"Stopped: the run took {elapsed:.1f}s, over its {self.timeout_s:g}s limit.",
            )
        return None

    after_tool_calls = before_model_call  # the same check after each round of tool calls


def timeout_stop(
    elapsed: float, run_timeout_s: float | None, iteration_timeout_s: float | None
) -> Stop:
    """The stop for a model or tool call cut off by `asyncio.timeout`: the whole run's
    limit if it is spent, else the per-iteration one."""
    if run_timeout_s is not None and elapsed >= run_timeout_s * 0.999:
        return Stop(
            "timeout", f"Stopped: the run took {elapsed:.1f}s, over its {run_timeout_s:g}s limit."
        )
    limit = f" of {iteration_timeout_s:g}s" if iteration_timeout_s else ""
    return Stop(
        "iteration_timeout",
        f"Stopped: a model call did not finish within the per-iteration limit{limit}.",
    )


class NoProgress(BasePolicy):
    """Stop after `limit` rounds of tool calls without progress.

    `signal="files"` (runs with tools that modify files, seed 003): no new file
    modification in `limit` rounds. `signal="observations"`: no new observation and no
    file change in `limit` rounds. The stop message says which signal fired.
    """

    def __init__(self, limit: int = 5, signal: str = "observations") -> None:
        self.limit = limit
        self.signal = signal

    def after_tool_calls(self, state: GuardState) -> Stop | Nudge | None:
        if len(state.new_observation) < self.limit:
            return None
        recent_changed = state.workspace_changed[-self.limit :]
        if any(recent_changed):
            return None
        if self.signal == "files":
            return Stop(
                "no_progress",
                f"Stopped: no file was modified in {self.limit} rounds of tool calls in a row "
                "(progress signal: file modifications, as the run has file-changing tools).",
            )
        if any(state.new_observation[-self.limit :]):
            return None
        return Stop(
            "no_progress",
            f"Stopped: {self.limit} rounds of tool calls in a row brought no new information "
            "and changed no file (progress signal: new observations).",
        )
