"""Ctrl-C on `loopwright run --engine temporal` while no worker polls the run's queue (its
only worker was killed during a tool call): the command says at once that no worker polls
and what became of the run (its cancel is recorded; it ends `cancelled` when a worker takes
it), and exits 130 without waiting for an end no worker can store. Before: 60-90 s of
silence, then exit 130 with nothing said. A worker that comes then ends the run."""

from __future__ import annotations

import asyncio
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO

from temporal_helpers import Workers, loopwright_env, run_command, write_script
from trial_helpers import until

from loopwright.engines.temporal import TemporalEngine
from loopwright.store import open_store

ANSWER_BOUND_S = 20.0
"""The command answers Ctrl-C this soon with no worker: a few requests to Temporal (its
waits for a run's end were 30 s each)."""


def _lines(stream: IO[str] | None) -> queue.Queue[str]:
    assert stream is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        with stream:
            for line in stream:
                lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


async def test_ctrl_c_with_no_worker_says_so_at_once(workers: Workers, tmp_path: Path) -> None:
    out = tmp_path / "out.txt"
    script = write_script(tmp_path, out, ["line1", "line2"])
    command = run_command(script, tmp_path, workers.store, "--engine", "temporal",
                          "--temporal", workers.address, "--task-queue", workers.queue)  # fmt: skip
    worker = workers.start(LOOPWRIGHT_TEST_HANG_AFTER="line1")
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=loopwright_env())  # fmt: skip
    store = open_store(workers.store)
    engine = TemporalEngine(workers.address, store, task_queue=workers.queue)
    try:
        err = _lines(proc.stderr)
        await until(lambda: "hanging after line1" in workers.log_of(0), workers.logs, 180)
        worker.send_signal(signal.SIGKILL)
        worker.wait()
        polled: list[float | None] = [0.0]

        async def nobody_polls() -> bool:
            polled[0] = await engine.polled_s_ago(workers.queue)
            return polled[0] is None

        deadline = time.monotonic() + 300  # Temporal forgets a dead poller after ~90 s
        while not await nobody_polls():
            assert time.monotonic() < deadline, "the killed worker still counts as polling"
            await asyncio.sleep(1.0)  # polling Temporal: nothing tells when it forgets
        pressed = time.monotonic()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=120)
        answered = time.monotonic() - pressed
        said = []
        while not err.empty():
            said.append(err.get())
        (run,) = store.list_runs()
        workers.start()  # a worker comes: it takes the recorded cancel
        deadline = time.monotonic() + 180
        while (record := store.get_run(run.run_id)) is None or record.status != "cancelled":
            assert time.monotonic() < deadline, f"not cancelled: {record}\n{workers.logs()}"
            await store.wait_for_events(run.run_id, after=record.last_seq if record else 0,
                                        timeout=1.0)  # fmt: skip
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        await engine.aclose()
        store.close()

    text = "".join(said)
    assert code == 130, text
    assert "no worker polls task queue" in text and "ends `cancelled`" in text, text
    assert answered < ANSWER_BOUND_S, (answered, text)
    assert out.read_text() == "line1\n"  # nothing ran after it
