"""CostLedger and the token/cost budget policy, checked before each model call."""

from __future__ import annotations

from dataclasses import dataclass, field

from loopwright.guards._policy import BasePolicy, GuardState, Stop
from loopwright.messages import Usage

# USD per million tokens (input, output). Local and scripted models cost nothing.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "openai:gpt-4.1": (2.0, 8.0),
    "openai:gpt-4.1-mini": (0.4, 1.6),
    "openai:gpt-4.1-nano": (0.1, 0.4),
    "openai:gpt-4o": (2.5, 10.0),
    "openai:gpt-4o-mini": (0.15, 0.6),
    "anthropic:claude-sonnet-4-5": (3.0, 15.0),
    "anthropic:claude-opus-4-1": (15.0, 75.0),
    "anthropic:claude-haiku-4-5": (1.0, 5.0),
}


NO_USAGE = Usage()
"""Usage is immutable: one shared zero."""


@dataclass
class CostLedger:
    """Tokens in/out per model, and their cost from a price table the user can extend."""

    prices: dict[str, tuple[float, float]] = field(default_factory=lambda: dict(DEFAULT_PRICES))
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    total_usage: Usage = NO_USAGE
    """Kept as calls are recorded, so reading it costs nothing per step."""
    total_cost: float = 0.0
    last_call: Usage = NO_USAGE
    """The most recent call's usage: the next call's input is at least as long."""

    def price_of(self, model: str) -> tuple[float, float]:
        return self.prices.get(model, (0.0, 0.0))

    def cost_of(self, model: str, usage: Usage) -> float:
        price_in, price_out = self.price_of(model)
        return (usage.input_tokens * price_in + usage.output_tokens * price_out) / 1_000_000

    def record(self, model: str, usage: Usage) -> None:
        if not (usage.input_tokens or usage.output_tokens):  # nothing to add (scripted, cached)
            self.usage_by_model.setdefault(model, usage)
            self.last_call = usage
            return
        self.usage_by_model[model] = self.usage_by_model.get(model, Usage()) + usage
        self.total_usage = self.total_usage + usage
        self.total_cost += self.cost_of(model, usage)
        self.last_call = usage


class Budget(BasePolicy):
    """Refuse a model call that would take the run past its token or cost budget.

    The next call's input is estimated as the larger of the conversation's own count
    (`state.next_input_tokens`) and the input the provider reported for the last call (the
    conversation only grows); its output as the largest output so far. A call that would
    take the run over the budget is not made.
    """

    def __init__(
        self,
        ledger: CostLedger,
        *,
        max_tokens_total: int | None = None,
        max_cost: float | None = None,
    ) -> None:
        self.ledger = ledger
        self.max_tokens_total = max_tokens_total
        self.max_cost = max_cost

    def before_model_call(self, state: GuardState) -> Stop | None:
        if self.max_tokens_total is None and self.max_cost is None:
            return None
        used = self.ledger.total_usage
        next_input = max(state.next_input_tokens, self.ledger.last_call.input_tokens)
        projected = Usage(next_input, state.largest_output_tokens)
        if self.max_tokens_total is not None:
            after = used.total_tokens + projected.total_tokens
            if after > self.max_tokens_total:
                return Stop(
                    "budget",
                    f"Stopped before a model call: {used.total_tokens:,} tokens used and the "
                    f"next call needs about {projected.total_tokens:,}, over the budget of "
                    f"{self.max_tokens_total:,}.",
                )
        if self.max_cost is not None:
            after_cost = self.ledger.total_cost + self.ledger.cost_of(state.model_name, projected)
            if after_cost > self.max_cost:
                return Stop(
                    "budget",
                    f"Stopped before a model call: ${self.ledger.total_cost:.4f} spent and the "
                    f"next call would bring it to about ${after_cost:.4f}, over the budget of "
                    f"${self.max_cost:.4f}.",
                )
        return None
