"""`loopwright chat`: a conversation at the terminal. Each line is a turn: a run of its own,
shown live (tools, approvals asked as `run` asks them), that follows the turn before it
(`after`); `/new` starts a new conversation, `/runs` lists this one's turns, `/quit` (or
end of input) ends the chat. `--after RUN_ID` takes a stored conversation up."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from loopwright.cli._follow import show_run
from loopwright.cli._options import add_options
from loopwright.cli._output import CONFIG_EPILOG
from loopwright.cli._run_options import RUN as RUN_OPTIONS
from loopwright.cli._run_spec import spec_from_args
from loopwright.cli._shared import (
    check_heartbeat,
    live_view,
    reach_flags,
    runtime_from_args,
    store_from_args,
    terminal_decider,
    whole_run_id,
)
from loopwright.cli._turns import (
    agent_from_args,
    say_unfinished,
    start_turn,
    turn_spec,
    workers_agent_spec,
)
from loopwright.errors import UsageError
from loopwright.safety.terminal import visible

if TYPE_CHECKING:
    from loopwright.agent import AgentExecutor, ExecutionResult
    from loopwright.models import Model
    from loopwright.runtime import Runtime
    from loopwright.store import RunStore

LEFT_OUT = {"--continue", "--output-schema", "--json", "--otel"}
"""`run` options a chat has no use for: a turn is a follow-up, its answer is text."""
CHAT_OPTIONS = tuple(o for o in RUN_OPTIONS if o.flags[0] not in LEFT_OUT)
COMMANDS = "/new (a new conversation), /runs (this conversation's turns), /quit"
PROMPT = "you> "


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "chat",
        help="a conversation with an agent: each line a follow-up turn",
        description="Talk to an agent at the terminal. Each line is a turn: a run of its own, "
        "shown live, that continues the conversation of the turn before. "
        f"Commands: {COMMANDS}; end of input (Ctrl-D) ends the chat too.",
        epilog=CONFIG_EPILOG.format(section="run"),
    )
    add_options(parser, CHAT_OPTIONS, "run")
    parser.set_defaults(
        handler=chat_command, request=None, continue_run=None, json=False, output_schema=None
    )


def chat_command(args: argparse.Namespace) -> int:
    check_heartbeat(args)
    agent = agent_from_args(args)
    store = store_from_args(args)
    try:
        after = whole_run_id(store, args.after) if args.after else None
        return asyncio.run(Chat(args, store, agent, after).run())
    finally:
        store.close()


class Chat:
    """The conversation at the terminal: the turn to follow, and the model its turns share
    (loaded once; a script file serves every turn in order)."""

    def __init__(
        self,
        args: argparse.Namespace,
        store: RunStore,
        agent: AgentExecutor[Any, Any] | None,
        after: str | None,
    ) -> None:
        self.args, self.store, self.agent, self.after = args, store, agent, after
        self.models: dict[tuple[str, str | None], Model] = {}
        self.failed = False

    async def run(self) -> int:
        runtime = runtime_from_args(self.args, self.store)
        try:
            if self.after is not None:
                turns = runtime.turns(self.after, tenant=self.args.tenant)  # RunNotFound
                say(f"continuing the conversation of run {self.after} ({len(turns)} turn(s))")
            while True:
                line = await asyncio.to_thread(read_line)
                if line is None:
                    break
                text = line.strip()
                if not text:
                    continue
                if text.startswith("/"):
                    if not self.command(runtime, text):
                        break
                    continue
                await self.turn(runtime, text)
        finally:
            runtime.close()
        return 1 if self.failed else 0

    def command(self, runtime: Runtime, text: str) -> bool:
        """A `/` command; False ends the chat."""
        given = text.split()[0]
        word = given.lower()
        if word in ("/quit", "/exit", "/q"):
            return False
        if word == "/new":
            self.after = None
            say("a new conversation: the next line is its first turn")
        elif word == "/runs":
            self.list_turns(runtime)
        else:
            say(f"unknown command {visible(given)}: {COMMANDS}")
        return True

    def list_turns(self, runtime: Runtime) -> None:
        if self.after is None:
            say("no turns yet in this conversation")
            return
        for number, record in enumerate(runtime.turns(self.after, tenant=self.args.tenant), 1):
            request = " ".join(record.request.split())[:80]
            print(visible(f"{number:>3}  {record.run_id}  {record.status:<11} {request}"))
        sys.stdout.flush()

    async def turn(self, runtime: Runtime, text: str) -> None:
        """One line: a run that follows the last turn; a refusal is one line, and the
        conversation stays where it was."""
        args = self.args
        view = live_view(args)
        try:
            spec = workers_agent_spec(args, spec_from_args(args, text))  # Temporal --agent
            if self.agent is None:
                spec = turn_spec(args, self.store, spec, self.after)
            model = self.model_of(runtime, spec.model, spec.base_url)
            handle = start_turn(runtime, args, self.agent, spec, self.after, model=model)
            await show_run(runtime, handle.run_id, view, decide=terminal_decider(args, runtime),
                           flags=reach_flags(args))  # fmt: skip
            result: ExecutionResult[Any] = await handle.wait()
        except UsageError as exc:
            view.close()
            print(f"loopwright: error: {visible(str(exc))}", file=sys.stderr, flush=True)
            return
        view.close()
        self.after = result.run_id
        self.failed = not result.success
        say_unfinished(result, args, reach_flags(args))

    def model_of(self, runtime: Runtime, spec: str, base_url: str | None) -> Model | None:
        """The model of the chat's turns, resolved once (None when the runs execute on
        another engine, whose workers resolve it)."""
        if self.agent is not None or runtime.engine is not runtime.embedded:
            return None
        key = (spec, base_url)
        if key not in self.models:
            model = runtime.models.resolve(spec, base_url=base_url)
            if hasattr(model, "strict"):  # a ScriptedModel: one script for every turn
                model.strict = False
            self.models[key] = model
        return self.models[key]


def read_line() -> str | None:
    """The next line of input (None at its end); on a terminal, after a prompt."""
    if sys.stdin.isatty():
        try:
            return input(PROMPT)
        except EOFError:
            return None
    line = sys.stdin.readline()
    return line if line else None


def say(line: str) -> None:
    print(f"loopwright: {line}", file=sys.stderr, flush=True)
