"""The embedded model's thread count: the cores free at each call by default, `?threads=N`
in its spec, `--threads N` on the command line (folded into the recorded spec)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from loopwright.cli import build_parser, main
from loopwright.cli._options import apply_config
from loopwright.cli._run_spec import spec_from_args
from loopwright.errors import ConfigurationError
from loopwright.models import resolve_model
from loopwright.models._local import LocalModel, weight_repacking_wanted
from loopwright.models._local_spec import (
    default_threads,
    parse_local_spec,
    physical_cores,
    spec_with_threads,
)
from loopwright.runtime import RunSpec


def fake_sysfs(root: Path, topology: dict[int, tuple[int, int] | None]) -> Path:
    """cpuN/topology/{physical_package_id,core_id}; None leaves a CPU without topology."""
    for cpu, place in topology.items():
        folder = root / f"cpu{cpu}" / "topology"
        folder.mkdir(parents=True)
        if place is not None:
            (folder / "physical_package_id").write_text(f"{place[0]}\n")
            (folder / "core_id").write_text(f"{place[1]}\n")
    return root


def test_hyper_threads_of_one_core_count_once(tmp_path: Path) -> None:
    # two sockets, two cores each, two hyper-threads per core: 8 CPUs, 4 cores
    topology = {cpu: (cpu // 4, (cpu // 2) % 2) for cpu in range(8)}
    sysfs = fake_sysfs(tmp_path, dict[int, tuple[int, int] | None](topology))
    assert physical_cores(range(8), sysfs) == 4
    assert physical_cores([0, 1], sysfs) == 1  # an affinity to one core's two threads
    assert physical_cores([0, 2, 4], sysfs) == 3


def test_a_cpu_without_topology_counts_as_a_core(tmp_path: Path) -> None:
    sysfs = fake_sysfs(tmp_path, {0: (0, 0), 1: (0, 0), 2: None})
    assert physical_cores([0, 1, 2], sysfs) == 2
    assert physical_cores([], sysfs) == 1  # never zero threads


def test_this_machine_has_between_one_core_and_its_cpu_count() -> None:
    cores = physical_cores()
    assert 1 <= cores <= len(os.sched_getaffinity(0))


def test_default_is_the_environment_else_the_physical_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("LOOPWRIGHT_LOCAL_THREADS", raising=False)
    assert default_threads() == physical_cores()
    monkeypatch.setenv("LOOPWRIGHT_LOCAL_THREADS", "3")
    assert default_threads() == 3
    monkeypatch.setenv("LOOPWRIGHT_LOCAL_THREADS", "two")
    with pytest.raises(ConfigurationError, match=r"LOOPWRIGHT_LOCAL_THREADS.*'two'"):
        default_threads()


def test_spec_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LOOPWRIGHT_LOCAL_THREADS", raising=False)
    assert parse_local_spec("") == ("", None)
    assert parse_local_spec("small?threads=4") == ("small", 4)
    assert parse_local_spec("?threads=1") == ("", 1)
    with pytest.raises(ConfigurationError, match=r"'local:small\?threads=0'.*>= 1"):
        parse_local_spec("small?threads=0")
    with pytest.raises(ConfigurationError, match=r"unknown option 'gpu'.*known: threads"):
        parse_local_spec("small?gpu=1")
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF")  # resolving does not load the file; a run would
    model = resolve_model(f"local:{gguf}?threads=3")
    assert isinstance(model, LocalModel)
    assert (model.path, model.threads, model.name) == (gguf, 3, f"local:{gguf}?threads=3")
    plain = resolve_model(f"local:{gguf}")
    assert isinstance(plain, LocalModel) and plain.threads is None  # the cores free per call
    monkeypatch.setenv("LOOPWRIGHT_LOCAL_THREADS", "2")
    fixed = resolve_model(f"local:{gguf}")
    assert isinstance(fixed, LocalModel) and fixed.threads == 2


def test_threads_are_folded_into_the_spec() -> None:
    assert spec_with_threads("local", None) == "local"
    assert spec_with_threads("local", 2) == "local?threads=2"
    assert spec_with_threads("local:small?threads=4", 1) == "local:small?threads=1"
    with pytest.raises(ConfigurationError, match="--threads is for the embedded model"):
        spec_with_threads("openai:gpt-4.1-mini", 2)
    with pytest.raises(ConfigurationError, match="--threads 0: threads must be"):
        spec_with_threads("local", 0)


def run_spec(argv: list[str]) -> RunSpec:
    args = build_parser().parse_args(argv)
    apply_config(args)
    return spec_from_args(args)


def test_run_records_the_thread_count_in_its_model_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no loopwright.toml, no user config, no LOOPWRIGHT_*
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    for name in [n for n in os.environ if n.startswith("LOOPWRIGHT_")]:
        monkeypatch.delenv(name)
    spec = run_spec(["run", "hi", "--model", "local:small", "--threads", "1"])
    assert spec.model == "local:small?threads=1"
    assert run_spec(["run", "hi"]).model == "local"  # the default is not frozen into it


def test_cli_refuses_threads_for_a_remote_model(capsys: pytest.CaptureFixture[str]) -> None:
    evals = Path(__file__).parents[2] / "evals"
    code = main(["eval", str(evals), "--model", "openai:gpt-4.1-mini", "--threads", "2"])
    assert code == 2
    assert "--threads is for the embedded model" in capsys.readouterr().err


def test_weight_repacking_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plain CPU buffers unless LOOPWRIGHT_LLAMA_REPACK=1 (repacking makes each load 1.3 s
    longer, for a prompt evaluation that was faster on one machine and slower on another)."""
    monkeypatch.delenv("LOOPWRIGHT_LLAMA_REPACK", raising=False)
    assert weight_repacking_wanted() is False
    monkeypatch.setenv("LOOPWRIGHT_LLAMA_REPACK", "1")
    assert weight_repacking_wanted() is True
    monkeypatch.setenv("LOOPWRIGHT_LLAMA_REPACK", "0")
    assert weight_repacking_wanted() is False
