"""RunSetup: everything one run needs, resolved once before the loop starts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loopwright.agent._options import AgentOptions
from loopwright.agent._result import VerificationResult
from loopwright.clock import Clock
from loopwright.guards import CostLedger, StopPolicy
from loopwright.messages import ModelResponse
from loopwright.models import Model
from loopwright.parsing import ParseOutcome
from loopwright.safety.scrub import Scrubber
from loopwright.tools import ToolExecutor, ToolRegistry

Verifier = Callable[[Path], Awaitable[VerificationResult]]


@dataclass
class RunSetup:
    run_id: str
    request: str
    tenant: str
    parent_run_id: str | None
    model: Model
    tools: ToolRegistry
    tool_mode: Literal["native", "prompted"]
    options: AgentOptions
    system_prompt: str
    parse: Callable[[ModelResponse], ParseOutcome]
    ledger: CostLedger
    policies: Sequence[StopPolicy]
    tool_executor: ToolExecutor
    scrubber: Scrubber
    clock: Clock
    verifier: Verifier | None

    def is_idempotent(self, tool_name: str) -> bool:
        return tool_name in self.tools and self.tools.get(tool_name).idempotent
