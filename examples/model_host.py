"""The embedded model's host: the phases of a call as they start, where its time went,
and what runs.

    python examples/model_host.py "What is 6 * 7?"   # one call to the embedded model
    python examples/model_host.py --status           # the model hosts running, their calls
    python examples/model_host.py --stop             # stop them

The first call starts the model host (one loaded copy of the model for every loopwright
process of yours) unless one runs; `on_model_phase` tells each phase as it starts
("loading the model", "waiting for the model: ...", "evaluating the prompt", "generating"),
and the reply's `timings` says how long each took. `LOOPWRIGHT_MODEL_HOST=off` runs the
model in this process instead (`pip install 'loopwright[local]'` either way).
"""

from __future__ import annotations

import asyncio
import sys

from loopwright.errors import LoopwrightError
from loopwright.messages import Message, ModelRequest
from loopwright.models import ModelPhase, host_statuses, on_model_phase, resolve_model, stop_hosts


def show_status() -> None:
    status = host_statuses()
    if not status["hosts"]:
        print(f"no model host is running (folder {status['folder']})")
    for host in status["hosts"]:
        calls = ", ".join(f"pid {c['pid']} {c['phase']}" for c in host.get("calls") or ())
        now = f"; now: {calls}" if calls else ""
        served = f"{host.get('served', 0)} calls served{now}"
        print(f"model host pid {host['pid']}: {host['state']}, {host.get('model')}, {served}")
    if status["turn"]:
        print(f"the model is in use by pid {status['turn']['pid']} ({status['turn']['command']})")


def said(phase: ModelPhase) -> None:
    print(f"… {phase.text}", flush=True)


async def ask(question: str) -> None:
    on_model_phase(said)
    model = resolve_model("local")
    request = ModelRequest(messages=(Message.user(question),), max_output_tokens=64)
    reply = await model.complete(request)
    on_model_phase(None)
    print(reply.text)
    if reply.timings is not None:
        print("timings (ms):", reply.timings.to_dict())


def main(argv: list[str]) -> int:
    try:
        if argv == ["--status"]:
            show_status()
        elif argv == ["--stop"]:
            for host in stop_hosts():
                print(f"model host pid {host['pid']}: {host['how']}")
        else:
            asyncio.run(ask(" ".join(argv) or "What is 6 * 7?"))
    except LoopwrightError as exc:
        print(f"model_host.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
