"""An OpenAI-compatible chat endpoint on loopback that answers every call after a fixed
latency, for benchmarks that need a model slower than a ScriptedModel (no LLM behind it).

A run's request text `echo N` scripts it: calls 1..N-1 answer an echo action, call N the
final answer (the call number is the count of assistant messages in the request, so a
repeated request gets the same reply).

    python bench/latency_provider.py --latency-ms 50    # prints `port NNNN`, serves until killed
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re

STEPS = re.compile(r"\becho (\d+)\b")
LENGTH = re.compile(rb"(?i)\r\ncontent-length:\s*(\d+)")


def reply(messages: list[dict[str, object]]) -> dict[str, object]:
    user = next(str(m["content"]) for m in messages if m["role"] == "user")
    found = STEPS.search(user)
    steps = int(found.group(1)) if found else 1
    done = sum(m["role"] == "assistant" for m in messages)
    if done < steps - 1:
        text = json.dumps({"action": "echo", "action_input": {"text": f"step {done}"}})
    else:
        text = json.dumps({"final_answer": "done"})
    return {
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    }


async def serve(latency_s: float) -> None:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:  # keep-alive: one request after another on this connection
                head = await reader.readuntil(b"\r\n\r\n")
                found = LENGTH.search(head)
                body = json.loads(await reader.readexactly(int(found.group(1)) if found else 0))
                await asyncio.sleep(latency_s)
                data = json.dumps(reply(body["messages"])).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(data), data))  # fmt: skip
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, backlog=1024)
    print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-ms", type=float, default=50.0)
    asyncio.run(serve(parser.parse_args().latency_ms / 1000))


if __name__ == "__main__":
    main()
