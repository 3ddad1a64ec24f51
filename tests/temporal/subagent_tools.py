"""A sub-agent tool of the Temporal engine tests: `helper` runs an agent that writes its
request as one line to the file the request names (`note`, not idempotent), then answers.

Its model decides from the request alone (no state across runs or processes): the first
call asks for `note`, the next one answers. Each call adds a line to PATH.calls (a test
counts them: a resumed child does not ask again what it was answered).
"""

from __future__ import annotations

import json
from typing import Literal

from loopwright import AgentExecutor, tool
from loopwright.messages import ModelRequest, ModelResponse, Usage


@tool(effect="write", idempotent=False)
def note(path: str, text: str) -> str:
    """Append one line of text to a file.

    Args:
        path: the file
        text: the line to append
    """
    with open(path, "a", encoding="utf-8") as file:
        file.write(text + "\n")
    return f"noted {text!r}"


class NoteTaker:
    """A model that calls `note` once with the request's `PATH: TEXT` (its first line),
    then answers `noted` (whatever the tool said: a refusal too)."""

    name = "note-taker"
    preferred_tool_mode: Literal["prompted"] = "prompted"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        users = [m.content for m in request.messages if m.role == "user"]
        path, _, line = users[0].splitlines()[0].partition(": ")
        with open(f"{path}.calls", "a", encoding="utf-8") as file:
            file.write(line + "\n")
        reply: dict[str, object]
        if any(text.startswith("Observation") for text in users):
            reply = {"thought": "done", "final_answer": "noted"}
        else:
            reply = {"thought": "note it", "action": "note",
                     "action_input": {"path": path, "text": line}}  # fmt: skip
        return ModelResponse(text=json.dumps(reply), usage=Usage(7, 3), model=self.name)


helper = AgentExecutor(NoteTaker(), [note]).as_tool(
    "helper", "Write down a line: give it 'PATH: TEXT'."
)
