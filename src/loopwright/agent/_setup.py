"""RunSetup: everything one run needs, resolved once before the loop starts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loopwright.agent._lineage import NO_LINEAGE, Lineage
from loopwright.agent._options import AgentOptions
from loopwright.agent._output import OutputSpec
from loopwright.agent._reply_grammar import tool_reply_schema
from loopwright.effects import VerificationResult
from loopwright.guards import CostLedger
from loopwright.guards._policy import PolicyHook
from loopwright.messages import ModelResponse, ToolSpec
from loopwright.models import Model
from loopwright.parsing._result import ParseOutcome
from loopwright.prompts._revisions import Revision, offers_several_calls
from loopwright.run_context import ApprovalRule, RunContext
from loopwright.safety.scrub import Scrubber
from loopwright.tools import ToolExecutor, ToolRegistry

Verifier = Callable[[Path], Awaitable[VerificationResult]]


@dataclass(frozen=True, slots=True)
class RunSetup:
    """What a run is made of; the loop reads it and never changes it."""

    context: RunContext
    """The run's context: its id, tenant, parents, workspace, scrubber, gatekeeper, ledger."""
    request: str
    model: Model
    tools: ToolRegistry
    tool_mode: Literal["native", "prompted"]
    options: AgentOptions
    revision: Revision
    """What the run's revision of the engine's behaviour does (`REVISIONS[options.revision]`,
    looked up once)."""
    system_prompt: str
    parse: Callable[[ModelResponse], ParseOutcome]
    before_model_call: Sequence[PolicyHook]
    after_tool_calls: Sequence[PolicyHook]
    tool_executor: ToolExecutor
    verifier: Verifier | None
    spec: dict[str, Any] | None = None
    """The RunSpec the run was built from (recorded in run_started), if any."""
    output: OutputSpec | None = None
    """The type the final answer must have (structured output), if any."""
    stop_at_action: bool = False
    """Ask the model to stop at the end of the first complete action of each reply (the run
    reads replies with the default parser chain, which uses the first action only)."""
    lineage: Lineage = NO_LINEAGE
    """The turn the run follows (its transcript starts with that turn's), the run it forks
    (its first steps served from that run's effects), or neither."""
    native_tool_specs: tuple[ToolSpec, ...] = field(init=False)
    native_tool_names: tuple[str, ...] = field(init=False)
    output_schema: dict[str, Any] | None = field(init=False)
    """What a constraining backend gets in ModelRequest.output_schema."""

    def __post_init__(self) -> None:
        specs = tuple(self.tools.specs()) if self.tool_mode == "native" else ()
        object.__setattr__(self, "native_tool_specs", specs)
        object.__setattr__(self, "native_tool_names", tuple(s.name for s in specs))
        schema = None
        if self.output is not None and self.options.constrained_output:
            prompted = self.tool_mode == "prompted"
            schema = self.output.reply_schema(self.tools.names() if prompted else ())
        elif self.tool_mode == "prompted" and self.options.reply_grammar:
            schema = tool_reply_schema(self.tools.specs(), is_final=self.revision.is_final)
        object.__setattr__(self, "output_schema", schema)

    @property
    def several_calls(self) -> bool:
        """A prompted reply is read for several JSON calls, one a line (revision 8 on, with
        `max_calls_per_reply` given and more than 1)."""
        calls = self.options.max_calls_per_reply or 1
        return offers_several_calls(self.tool_mode, self.revision, calls)

    @property
    def run_id(self) -> str:
        return self.context.run_id

    @property
    def tenant(self) -> str:
        return self.context.tenant

    @property
    def parent_run_id(self) -> str | None:
        return self.context.parent_run_id

    @property
    def parent_call_id(self) -> str | None:
        """A sub-agent's run: the lead's tool call that started it."""
        return self.context.parent_call_id

    @property
    def ledger(self) -> CostLedger:
        return self.context.ledger

    @property
    def scrubber(self) -> Scrubber | None:
        return self.context.scrubber

    @property
    def approval(self) -> ApprovalRule | None:
        """Which tool calls wait for a decision before they run."""
        return self.context.approval
