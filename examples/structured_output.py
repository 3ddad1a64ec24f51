"""Structured output: the agent's final answer as a validated pydantic value.

    python examples/structured_output.py           # a scripted model (no model needed)
    python examples/structured_output.py local     # the embedded model, output constrained

The first scripted answer leaves out a field: it goes back to the model with the
validation error, and the second answer validates. `result.output_as(Invoice)` is an
`Invoice` for mypy and at run time.
"""

from __future__ import annotations

import asyncio
import sys

from pydantic import BaseModel

from loopwright import AgentExecutor
from loopwright.events import Event, OutputInvalidEvent
from loopwright.models import Model, resolve_model
from loopwright.testing import ScriptedModel

REQUEST = "Read this: 'Invoice 2024-17 from Acme Tools, total 1,250.50 EUR.' Extract the invoice."


class Invoice(BaseModel):
    number: str
    supplier: str
    total: float
    currency: str


def scripted() -> Model:
    return ScriptedModel(
        [
            '{"thought": "extract", "final_answer": {"number": "2024-17", "supplier": "Acme Tools",'
            ' "total": 1250.5}}',
            '{"thought": "add the currency", "final_answer": {"number": "2024-17",'
            ' "supplier": "Acme Tools", "total": 1250.5, "currency": "EUR"}}',
        ]
    )


async def main(model_name: str | None) -> int:
    model = resolve_model(model_name) if model_name else scripted()
    agent = AgentExecutor(model, output_type=Invoice)

    async def show(event: Event) -> None:
        if isinstance(event, OutputInvalidEvent):
            print("sent back:", "; ".join(event.errors))

    result = await agent.run(REQUEST, on_event=show)
    invoice = result.output_as(Invoice)  # raises OutputValidationError if it never validated
    print(
        f"invoice {invoice.number} from {invoice.supplier}: {invoice.total:.2f} {invoice.currency}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None)))
