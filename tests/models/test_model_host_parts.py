"""The model host's parts that start nothing: the order of the queue, the thread count
from /proc/stat, the no-spin setting, the user's turn, the host folder's checks, the
timings a reply carries and where they are shown (`runs show`, the live view), and replay,
which serves recorded replies whatever the thread count."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from loopwright.cli._view import LiveView
from loopwright.errors import ConfigurationError, ModelError
from loopwright.messages import ModelResponse, ModelTimings, Usage
from loopwright.models import ModelPhase, ModelRegistry
from loopwright.models._host_files import host_dir, host_key, open_lock, try_lock, write_json
from loopwright.models._host_queue import FairQueue, Pending
from loopwright.models._threads import Sample, others_busy, quiet_barriers, read_sample, threads_for
from loopwright.models._turn import STOP_HINT, turn
from loopwright.runtime import RunSpec, Runtime, replay_run
from loopwright.store import SqliteRunStore
from loopwright.testing import ScriptedModel

# --- the queue ------------------------------------------------------------------------------


def pending(client: str, gone: Callable[[], bool] = lambda: False) -> Pending:
    return Pending(client, f"loopwright run ({client})", {}, lambda _m: True, gone)


def test_a_new_client_goes_before_one_that_used_the_model_a_lot() -> None:
    queue = FairQueue(grace_s=0.0)
    busy = pending("eval")
    queue.submit(busy)
    assert queue.take(timeout=0) is busy
    queue.done(busy, seconds=40.0)
    later_busy, newcomer = pending("eval"), pending("readme")
    queue.submit(later_busy)  # queued first...
    queue.submit(newcomer)
    assert queue.take(timeout=0) is newcomer  # ...but the newcomer used nothing yet
    queue.done(newcomer, seconds=3.0)
    assert queue.take(timeout=0) is later_busy


def test_two_clients_that_start_together_alternate() -> None:
    queue = FairQueue(grace_s=0.0)
    order = []
    calls = {"a": 3, "b": 3}
    for client in calls:
        queue.submit(pending(client))
    while (call := queue.take(timeout=0)) is not None:
        order.append(call.client)
        queue.done(call, seconds=4.0)
        calls[call.client] -= 1
        if calls[call.client]:
            queue.submit(pending(call.client))
    assert order == ["a", "b", "a", "b", "a", "b"]


def test_the_model_waits_briefly_for_the_light_client_it_just_served() -> None:
    """A short run beside a long evaluation: between its calls (its tools run) the model
    is kept for it, up to the grace time, instead of going to the evaluation."""
    queue = FairQueue(grace_s=30.0)
    heavy = pending("eval")
    queue.submit(heavy)
    queue.done(queue.take(timeout=0) or heavy, seconds=60.0)
    light = pending("readme")
    queue.submit(light)
    assert queue.take(timeout=0) is light
    queue.done(light, seconds=2.0)
    queue.submit(pending("eval"))
    assert queue.take(timeout=0.2) is None  # held for the light client's next call
    follow_up = pending("readme")
    queue.submit(follow_up)
    assert queue.take(timeout=0) is follow_up


def test_the_model_is_not_held_for_a_client_that_used_more() -> None:
    queue = FairQueue(grace_s=30.0)
    first = pending("a")
    queue.submit(first)
    queue.done(queue.take(timeout=0) or first, seconds=5.0)
    other = pending("b")
    queue.submit(other)
    assert queue.take(timeout=0) is other  # "a" used more: no grace for it


def test_a_call_whose_client_is_gone_is_dropped_and_stop_returns_the_rest() -> None:
    queue = FairQueue(grace_s=0.0)
    gone = pending("a", gone=lambda: True)
    kept = pending("b")
    queue.submit(gone)
    queue.submit(kept)
    assert queue.take(timeout=0) is kept
    queue.done(kept, 1.0)
    waiting = pending("c")
    queue.submit(waiting)
    assert queue.stop() == [waiting]
    assert queue.submit(pending("d")) is False  # a stopping host takes no call
    assert queue.take(timeout=0) is None


# --- threads --------------------------------------------------------------------------------


def stat_file(tmp_path: Path, busy: list[int]) -> Path:
    """A /proc/stat with one line per CPU: `busy[i]` ticks of user time, 1000 idle."""
    lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
    lines += [f"cpu{i} {ticks} 0 0 1000 0 0 0 0 0 0" for i, ticks in enumerate(busy)]
    path = tmp_path / "stat"
    path.write_text("\n".join(lines) + "\nintr 1 2 3\n")
    return path


def test_busy_time_is_read_for_the_cpus_this_process_may_use(tmp_path: Path) -> None:
    ticks = os.sysconf("SC_CLK_TCK")
    sample = read_sample(stat_file(tmp_path, [ticks * 3, ticks * 5]), cpus={1})
    assert sample is not None and sample.busy == pytest.approx(5.0)
    both = read_sample(stat_file(tmp_path, [ticks * 3, ticks * 5]), cpus={0, 1})
    assert both is not None and both.busy == pytest.approx(8.0)
    assert read_sample(tmp_path / "missing") is None  # not Linux: nothing to go by


def test_the_cores_others_use_leave_out_this_process_own_time() -> None:
    old, new = Sample(at=0.0, busy=100.0, own=10.0), Sample(at=2.0, busy=103.0, own=11.0)
    assert others_busy(old, new) == pytest.approx(1.0)  # 3 busy seconds, 1 of them ours
    assert others_busy(new, new) == 0.0


@pytest.mark.parametrize(
    ("free", "threads"),
    [(2.0, 2), (1.9, 2), (1.6, 1), (1.0, 1), (0.2, 1), (4.0, 2)],
)
def test_a_thread_per_free_core_at_least_one(free: float, threads: int) -> None:
    assert threads_for(free, cores=2) == threads


def test_a_short_spin_at_llama_cpp_barriers_unless_the_user_chose(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.delenv("GOMP_SPINCOUNT", raising=False)
    quiet_barriers()
    assert os.environ["GOMP_SPINCOUNT"] == "10000"  # libgomp's default: 300,000
    monkeypatch.delenv("GOMP_SPINCOUNT")
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    quiet_barriers()
    assert "GOMP_SPINCOUNT" not in os.environ


# --- the turn and the host folder -----------------------------------------------------------


def test_a_call_waits_for_the_turn_at_most_the_time_set_and_says_who_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(tmp_path / "host"))
    monkeypatch.setenv("LOOPWRIGHT_MODEL_WAIT", "0.3")
    folder = host_dir()
    holder = open_lock(folder / "turn.lock")  # another open file: another holder for flock
    assert try_lock(holder)
    write_json(folder / "turn.json", {"pid": 4242, "command": "loopwright eval evals/"})
    told: list[str] = []
    with pytest.raises(ModelError) as failed, turn(told.append):
        pass
    assert told == ["pid 4242 (loopwright eval evals/)"]
    assert "waited 0 s (LOOPWRIGHT_MODEL_WAIT)" in str(failed.value)
    assert "pid 4242 (loopwright eval evals/) is using it" in str(failed.value)
    assert STOP_HINT in str(failed.value)
    holder.close()  # released: the next call gets its turn at once
    with turn(told.append) as waited:
        assert waited == 0.0
    assert json.loads((folder / "turn.json").read_text())["pid"] == os.getpid()


def test_the_host_folder_is_private_and_must_be_the_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(loose))
    assert stat.S_IMODE(host_dir().stat().st_mode) == 0o700
    link = tmp_path / "link"
    link.symlink_to(loose)
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(link))
    with pytest.raises(ConfigurationError, match=r"link is not a folder of yours.*MODEL_HOST=off"):
        host_dir()


def test_a_host_serves_one_model_install_and_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.delenv("LOOPWRIGHT_PROMPT_CACHE", raising=False)
    key = host_key(model, 8192)
    assert host_key(model, 8192) == key
    assert host_key(model, 4096) != key
    monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", "0")  # a host with its cache off is another
    assert host_key(model, 8192) != key


# --- the timings, shown -----------------------------------------------------------------------


TIMINGS = ModelTimings(
    load_ms=1200.0, wait_ms=10.0, prompt_ms=2100.0, generate_ms=3400.0, threads=2
)


def test_a_reply_carries_its_timings_only_when_known() -> None:
    plain = ModelResponse(text="hi", usage=Usage(3, 1))
    assert "timings" not in plain.to_dict()  # the wire form of every other reply is unchanged
    timed = ModelResponse(text="hi", usage=Usage(3, 1), timings=TIMINGS)
    data = timed.to_dict()
    assert data["timings"] == {"load_ms": 1200.0, "wait_ms": 10.0, "prompt_ms": 2100.0,
                               "generate_ms": 3400.0, "threads": 2}  # fmt: skip
    assert ModelResponse.from_dict(data) == timed


def test_the_live_view_says_loading_the_model_and_waiting() -> None:
    out = io.StringIO()
    view = LiveView(Console(file=out, width=120, force_terminal=False))
    view.model_phase(ModelPhase("local", "loading", "starting the model host"))
    view.model_phase(ModelPhase("local", "waiting", "pid 7 (loopwright eval evals/) for 3 s"))
    view.model_phase(ModelPhase("local", "prompt", "2 threads"))
    view.close()
    lines = out.getvalue().splitlines()
    assert lines == [
        "  … loading the model: starting the model host",
        "  … waiting for the model: pid 7 (loopwright eval evals/) for 3 s",
    ]


def recorded_run(tmp_path: Path, spec_model: str) -> tuple[SqliteRunStore, str]:
    """A run of `spec_model` whose replies (scripted) carry the embedded model's timings."""
    act = json.dumps({"thought": "Add them.", "action": "add", "action_input": {"a": 2, "b": 3}})
    done = json.dumps({"thought": "Done.", "final_answer": "5"})
    replies = [ModelResponse(text=t, usage=Usage(500, 20), timings=TIMINGS) for t in (act, done)]

    def local(_name: str, _url: str | None) -> Any:
        return ScriptedModel(replies, name=spec_model)

    store = SqliteRunStore(tmp_path / "runs.db")
    runtime = Runtime(store, models=ModelRegistry().with_factory("local", local))
    spec = RunSpec(request="What is 2 + 3?", model=spec_model,
                   tools=(f"{Path(__file__).parents[2]}/examples/tools.py:add",))  # fmt: skip

    async def run() -> str:
        handle = runtime.start(spec)
        await handle.wait()
        return handle.run_id

    run_id = asyncio.run(run())
    runtime.close()
    return store, run_id


def test_runs_show_names_each_calls_phases(tmp_path: Path, run_cli: Callable[..., Any]) -> None:
    store, run_id = recorded_run(tmp_path, "local?threads=2")
    store.close()
    shown = run_cli("runs", "show", run_id, env={"LOOPWRIGHT_STORE": str(tmp_path / "runs.db")})
    assert shown.code == 0, shown.err
    lines = [line for line in shown.out.splitlines() if "model_response" in line]
    assert len(lines) == 2
    assert lines[0].endswith(
        " [loading the model 1.2 s · evaluating the prompt 2.1 s · generating 3.4 s, 2 threads]"
    )  # waiting 10 ms: not worth naming
    # each call's duration and tokens, before its phases
    assert re.search(r"Add them\. → add \(\d+ ms, [\d,]+ → [\d,]+ tokens\) \[", lines[0])


def test_replay_serves_the_recorded_replies_whatever_the_threads_now(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run recorded on 2 threads replays with 1 thread set, the model host on, and no
    model: the replies come from its log, so nothing is loaded and no host starts."""
    store, run_id = recorded_run(tmp_path, "local?threads=2")
    monkeypatch.setenv("LOOPWRIGHT_LOCAL_THREADS", "1")
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST", "on")
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(tmp_path / "host"))
    report = asyncio.run(replay_run(store, run_id))
    store.close()
    assert report.ok, report.describe()
    assert report.events > 5
    assert not (tmp_path / "host").exists()  # no model host was asked for
