"""CPU of the pieces a Temporal worker does for every run, one at a time in this process
(no server): what bench/temporal_compare.py's per-run CPU is made of.

- the sandbox: a sandboxed AgentRunWorkflow instance (made once per workflow run), and one
  serialization-context lookup through it (Temporal's worker makes one per payload
  sequence it encodes or decodes, about 88 a 5-step run);
- a model call's input (the largest payload of a step) written and read by Temporal's
  default JSON converter and by the engine's (engines/temporal/_payload_json.py);
- sealing and opening that payload (AES-256-GCM, engines/temporal/_codec.py).

    python bench/temporal_pieces.py            # CPU µs each, medians of 5 repeats
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from temporalio import workflow  # noqa: E402
from temporalio.api.common.v1 import Payload, Payloads  # noqa: E402
from temporalio.api.failure.v1 import Failure  # noqa: E402
from temporalio.converter import DataConverter, PayloadConverter  # noqa: E402
from temporalio.worker import WorkflowInstanceDetails  # noqa: E402
from temporalio.worker.workflow_sandbox._runner import _fake_info  # noqa: E402

from loopwright.agent import AgentOptions  # noqa: E402
from loopwright.engines.temporal._codec import PayloadCipher, SealedOnlyPayloads  # noqa: E402
from loopwright.engines.temporal._payloads import ModelCallInput, RunPlan  # noqa: E402
from loopwright.engines.temporal._sandbox import workflow_runner  # noqa: E402
from loopwright.engines.temporal._workflow import AgentRunWorkflow  # noqa: E402
from loopwright.runtime import RunSpec  # noqa: E402


def cpu_us(work: Callable[[], Any], count: int, repeats: int = 5) -> float:
    """Median over `repeats` of the CPU µs one `work()` takes (`count` in a row)."""
    work()
    samples = []
    for _ in range(repeats):
        started = time.process_time()
        for _ in range(count):
            work()
        samples.append((time.process_time() - started) / count * 1e6)
    return statistics.median(samples)


def at_once(coroutine: Any) -> Any:
    """The result of a coroutine that never waits (the codec's), without an event loop."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("the coroutine waited")


def model_call_input() -> ModelCallInput:
    options = AgentOptions(max_iterations=6, repetition_threshold=6)
    spec = RunSpec(request="echo", model="scripted:x.json", tools=("echo",), options=options)
    plan = RunPlan("run_" + "0" * 28, spec.to_dict(), "scripted", "prompted", "ws " * 50,
                   tool_code="c" * 64, gate_key="k" * 32)  # fmt: skip
    messages = [{"role": "assistant", "content": "x" * 200}, {"role": "user", "content": "y" * 300}]
    events = [{"seq": i, "type": "tool_call", "ts": 1.0, "data": {"a": i}} for i in range(3)]
    return ModelCallInput(plan, 1, 0, 2, messages, events=events)


def sandbox_instance() -> Any:
    return workflow_runner().create_instance(
        WorkflowInstanceDetails(
            payload_converter_factory=DataConverter.default._new_payload_converter,
            failure_converter_class=DataConverter.default.failure_converter_class,
            interceptor_classes=[], defn=workflow._Definition.must_from_class(AgentRunWorkflow),
            info=_fake_info, randomness_seed=1, extern_functions={},
            disable_eager_activity_execution=False, worker_level_failure_exception_types=[],
            patch_activation_callback=None, last_completion_result=Payloads(),
            last_failure=Failure(),
        )
    )  # fmt: skip


def _converting(
    converter: PayloadConverter, value: ModelCallInput, payload: Payload
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    return (lambda: converter.to_payloads([value]),
            lambda: converter.from_payloads([payload], [ModelCallInput]))  # fmt: skip


async def measure() -> dict[str, float]:
    figures: dict[str, float] = {}
    figures["sandboxed AgentRunWorkflow instance"] = cpu_us(sandbox_instance, 10)
    instance = sandbox_instance()
    figures["serialization context through the sandbox"] = cpu_us(
        lambda: instance.get_serialization_context(None), 500
    )
    value = model_call_input()
    for name, converter in (("Temporal's", DataConverter.default.payload_converter),
                            ("the engine's", SealedOnlyPayloads())):  # fmt: skip
        [payload] = converter.to_payloads([value])
        write, read = _converting(converter, value, payload)
        figures[f"model call input written, {name} JSON"] = cpu_us(write, 200)
        figures[f"model call input read, {name} JSON"] = cpu_us(read, 200)
    cipher = PayloadCipher(b"k" * 32)
    [sealed] = await cipher.encode([payload])
    figures["model call input sealed (AES-256-GCM)"] = cpu_us(
        lambda: at_once(cipher.encode([payload])), 500
    )
    figures["model call input opened"] = cpu_us(lambda: cipher._open(sealed), 500)
    return figures


def main() -> None:
    figures = asyncio.run(measure())
    print("| piece | CPU µs |\n| --- | ---: |")
    for name, us in figures.items():
        print(f"| {name} | {us:,.0f} |")


if __name__ == "__main__":
    main()
