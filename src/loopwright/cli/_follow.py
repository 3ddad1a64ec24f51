"""Showing a run to its end at the terminal, whichever engine and process executes it:
its events through the view, its waiting gates decided, Ctrl-C and a closed pipe ending it
cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from loopwright.cli._output import is_pipe, reader_gone, silence
from loopwright.events import ConfirmationRequiredEvent, Event

if TYPE_CHECKING:  # a command that shows a run made its Runtime
    from loopwright.runtime import Runtime

GATE_REOPEN_POLL_S = 0.02
"""How often a resumed run is looked at until it waits at its recorded gate again."""
READER_POLL_S = 0.5
"""How often a pipe's reader is looked for while a run is shown on the pipe."""
CANCEL_WAIT_S = 30.0
"""After Ctrl-C, how long the run's end (cancelled on its engine) is waited for and shown."""


class View(Protocol):
    def show(self, event: Event, line: str | None = None) -> None:
        """Show one event; `line`: its JSON line as stored, when the follower has it."""
        ...

    def resumed(self, recorded: Sequence[Event]) -> None: ...

    def close(self) -> None: ...


Decide = Callable[[ConfirmationRequiredEvent], Awaitable[None]]
"""Decides a gate the run waits at (asked once per gate shown, not for other events)."""


async def show_run(
    runtime: Runtime,
    run_id: str,
    view: View,
    *,
    decide: Decide | None = None,
    after: int = 0,
    cancel_on_interrupt: bool = True,
    waiting: Sequence[ConfirmationRequiredEvent] = (),
    flags: str = "",
) -> int:
    """Show the run's events to its end (`Runtime.follow`: the same whichever engine and
    process executes it); the last seq shown. `waiting`: the gates a resumed run waits at
    again (recorded before `after`), shown and decided first.

    With `cancel_on_interrupt`, a run this command started does not outlive it: Ctrl-C
    interrupts it (it stays resumable, stderr says how to resume or cancel it; a second
    Ctrl-C while it stops cancels it), a closed stdout (`| head`: the run is stored
    `cancelled`, stderr says so) or any other error here cancels it on its engine (its end
    is shown). Without, the run goes on.
    `flags`: the options that reach the run's store (`reach_flags`), for the line that says
    how to see its events."""
    last = after
    watch = _ReaderWatch.start() if cancel_on_interrupt else None
    try:
        for gate in waiting:
            view.show(gate)
            if decide is not None:
                await _until_asked_again(runtime, gate)
                await decide(gate)
        async with contextlib.aclosing(runtime.follow_lines(run_id, after=after)) as events:
            async for event, line in events:
                view.show(event, line)
                if event.run_id == run_id:  # not a sub-agent's (it has a run of its own)
                    last = event.seq
                if decide is not None and isinstance(event, ConfirmationRequiredEvent):
                    await decide(event)
    except BaseException as exc:
        await _ended_early(runtime, run_id, view, exc, watch, last=last,
                           cancel_on_interrupt=cancel_on_interrupt, flags=flags)  # fmt: skip
        raise
    finally:
        if watch is not None:
            watch.stop()
    return last


async def _ended_early(
    runtime: Runtime,
    run_id: str,
    view: View,
    exc: BaseException,
    watch: _ReaderWatch | None,
    *,
    last: int,
    cancel_on_interrupt: bool,
    flags: str,
) -> None:
    """The showing ended before the run did (`exc`): Ctrl-C, a closed stdout, an error.
    What `show_run` says about the run it started; raises BrokenPipeError for a closed
    stdout (the caller re-raises `exc` otherwise)."""
    closed = isinstance(exc, BrokenPipeError) or (watch is not None and watch.gone)
    if closed and watch is not None and watch.gone:
        watch.task.uncancel()  # the watch cancelled the follow: not Ctrl-C
    ctrl_c = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt) and not closed
    if cancel_on_interrupt and ctrl_c and await _interrupt(runtime, run_id, flags):
        return
    if cancel_on_interrupt:
        ended = False
        with contextlib.suppress(Exception):
            ended = await runtime.cancel(run_id)
        if ended and not closed:  # the end, shown within CANCEL_WAIT_S (not cancelled again)
            ending = show_run(runtime, run_id, view, after=last, cancel_on_interrupt=False)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(ending, CANCEL_WAIT_S)
    if closed:
        silence(sys.stdout)
        _say_stdout_closed(runtime, run_id, cancel_on_interrupt, flags)
        raise BrokenPipeError("stdout was closed") from None


async def _interrupt(runtime: Runtime, run_id: str, flags: str) -> bool:
    """Ctrl-C: stop the run without ending it (`Runtime.interrupt`); stderr says how to go
    on with it or cancel it. A second Ctrl-C while it stops cancels it. False when no run
    of this process executes it (it is cancelled on its engine, as before)."""
    loop = asyncio.get_running_loop()
    again = asyncio.Event()
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # main thread
        loop.add_signal_handler(signal.SIGINT, again.set)
    try:
        interrupted = await runtime.interrupt(run_id)
        if again.is_set():  # Ctrl-C twice: cancelled (interrupted first, then ended)
            await runtime.cancel(run_id)
            print(f"loopwright: run {run_id} was cancelled", file=sys.stderr, flush=True)
            return True
    finally:
        with contextlib.suppress(Exception):
            loop.remove_signal_handler(signal.SIGINT)
    if interrupted:
        print(f"loopwright: run {run_id} was interrupted; `loopwright runs resume {run_id}"
              f"{flags}` goes on with it, `loopwright runs cancel {run_id}{flags}` ends it",
              file=sys.stderr, flush=True)  # fmt: skip
    return interrupted


class _ReaderWatch:
    """While a run is shown on a pipe, looks every READER_POLL_S whether the pipe's reader
    went away, and then stops the showing (a run waiting at a gate writes nothing that
    would fail)."""

    def __init__(self, task: asyncio.Task[object]) -> None:
        self.task = task
        self.gone = False
        self._watching = asyncio.get_running_loop().create_task(self._watch())

    @classmethod
    def start(cls) -> _ReaderWatch | None:
        task = asyncio.current_task()
        if task is None or not is_pipe(sys.stdout):
            return None
        return cls(task)

    async def _watch(self) -> None:
        while not reader_gone(sys.stdout):
            await asyncio.sleep(READER_POLL_S)
        self.gone = True
        self.task.cancel()

    def stop(self) -> None:
        self._watching.cancel()


def _say_stdout_closed(runtime: Runtime, run_id: str, cancelled: bool, flags: str) -> None:
    record = runtime.store.get_run(run_id)
    status = record.status if record is not None else "unknown"
    what = f"run {run_id} was cancelled (stored {status})" if cancelled else (
        f"stopped following run {run_id} ({status}; it goes on)"
    )  # fmt: skip
    print(f"loopwright: stdout was closed: {what}; `loopwright runs show {run_id}{flags}` "
          "shows its events", file=sys.stderr)  # fmt: skip


def waiting_again(recorded: Sequence[Event]) -> list[ConfirmationRequiredEvent]:
    """The gates a run was waiting at when its process stopped: resumed, it asks them again
    (from now, for their whole timeout)."""
    from loopwright.tasks import pending_gates  # only `runs resume` and `task resume`

    pending = {gate["request_id"] for gate in pending_gates(recorded)}
    now = time.time()
    return [
        dataclasses.replace(event, ts=now)
        for event in recorded
        if isinstance(event, ConfirmationRequiredEvent) and event.request_id in pending
    ]


async def _until_asked_again(runtime: Runtime, gate: ConfirmationRequiredEvent) -> None:
    """Until the resumed run, replaying its log, waits at `gate` here again (so a decision
    reaches it); a run another engine executes takes it through the engine at any time."""
    handle = runtime.handles.get(gate.run_id)
    pending = getattr(runtime.gates, "pending", None)
    if handle is None or pending is None:
        return
    while not handle.done and all(g.request_id != gate.request_id for g in pending(gate.run_id)):
        await asyncio.sleep(GATE_REOPEN_POLL_S)
