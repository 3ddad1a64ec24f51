"""Token streaming: watch an agent's reply being written, on any model that streams.

    OPENAI_BASE_URL=http://127.0.0.1:8080/v1 python examples/streaming.py "What is 6 * 7?"

`agent.stream()` yields every event of the run; while the model writes, these include
`model_text_delta` events with the new text (coalesced, scrubbed, never stored). The reply
is then read from the complete message (`model_response`), tool calls included. Works the
same with `OllamaModel`, `AnthropicModel` and the embedded model (`local`).
"""

from __future__ import annotations

import asyncio
import os
import sys

from loopwright import AgentExecutor
from loopwright.events import ModelResponseEvent, ModelTextDeltaEvent, RunFinishedEvent
from loopwright.models import OpenAIModel


async def main(question: str) -> None:
    model = OpenAIModel(os.environ.get("MODEL", "qwen"))  # OPENAI_BASE_URL says where
    deltas = 0
    async for event in AgentExecutor(model).stream(question):
        if isinstance(event, ModelTextDeltaEvent):
            deltas += 1
            print(event.text, end="", flush=True)  # the reply as it is generated
        elif isinstance(event, ModelResponseEvent):
            print(f"\n[reply complete: {deltas} deltas]")
        elif isinstance(event, RunFinishedEvent):
            print(f"answer: {event.answer}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "What is 6 * 7?"))
