"""Fork a run: go back to a step and run on from there, with a change.

    python examples/fork.py

1. A run (from a RunSpec, stored in SQLite) converts 12 USD to GBP (step 1), then to EUR
   (step 2), then answers (step 3). Each conversion leaves a line in a log file.
2. `runtime.fork(run_id, 1, request=..., model=...)` starts a new run whose first step is
   the old run's, served from its log: no model call, no tool call made again (the log
   file shows it). From step 2 on, it runs live with the other model and request.
3. Forking past the last step is refused in one line, and nothing starts.

Scripted models stand in for LLMs (the `script:` provider below), so the example runs
anywhere.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from loopwright.errors import ForkError
from loopwright.models import ModelRegistry
from loopwright.runtime import RunSpec, Runtime
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

TOOL_FILE = '''
from pathlib import Path
from loopwright import tool

@tool(effect="write")
def convert(amount: float, currency: str) -> str:
    """Convert US dollars to another currency.

    Args:
        amount: how many US dollars
        currency: GBP, EUR or JPY
    """
    with (Path(__file__).parent / "conversions.log").open("a") as log:
        log.write(currency + "\\n")
    return f"{amount * {'GBP': 0.79, 'EUR': 0.92, 'JPY': 151.3}[currency]:.2f} {currency}"
'''


def step(currency: str) -> str:
    arguments = {"amount": 12, "currency": currency}
    return json.dumps({"thought": "convert", "action": "convert", "action_input": arguments})


def answer(text: str) -> str:
    return json.dumps({"thought": "done", "final_answer": text})


SCRIPTS = {
    "first": [step("GBP"), step("EUR"), answer("9.48 GBP and 11.04 EUR")],
    "second": [step("JPY"), answer("9.48 GBP and 1815.60 JPY")],
}


async def main(folder: Path) -> None:
    (folder / "tools.py").write_text(TOOL_FILE)
    models = {name: ScriptedModel(replies) for name, replies in SCRIPTS.items()}
    registry = ModelRegistry().with_factory("script", lambda name, _url: models[name])
    runtime = Runtime(SqliteRunStore(folder / "runs.db"), models=registry)
    spec = RunSpec(
        request="What is 12 USD in GBP, then in EUR?",
        model="script:first",
        tools=(f"{folder / 'tools.py'}:convert",),
        workspace=str(folder),
    )
    first = await runtime.start(spec).wait()
    print("run:", first.answer)
    log = folder / "conversions.log"
    print("  converted:", log.read_text().split())

    forked = await runtime.fork(
        first.run_id, 1, request="What is 12 USD in GBP, then in yen?", model="script:second"
    ).wait()
    print("fork at step 1:", forked.answer)
    print("  converted:", log.read_text().split(), "(GBP was served, not run again)")
    started = runtime.store.events(forked.run_id)[0]
    print("  run_started.fork_of:", started.fork_of)  # type: ignore[union-attr]

    try:
        runtime.fork(first.run_id, 7)
    except ForkError as refused:
        print("refused:", refused)
    runtime.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(Path(tmp)))
