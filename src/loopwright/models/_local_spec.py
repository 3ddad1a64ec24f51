"""The embedded model's spec and thread count: `local`, `local:small?threads=4`, ...

Options follow the name after `?` (`local?threads=1`, `local:PATH.gguf?threads=2`), so the
thread count is part of the recorded model spec: greedy output differs between thread
counts, and a resumed or replayed run must use the same one.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from loopwright.errors import ConfigurationError

SYSFS_CPU = Path("/sys/devices/system/cpu")
THREADS_ENV = "LOOPWRIGHT_LOCAL_THREADS"
OPTIONS = ("threads",)


def physical_cores(cpus: Iterable[int] | None = None, sysfs: Path = SYSFS_CPU) -> int:
    """The physical cores among the CPUs this process may use (all of `cpus` if given).

    Hyper-threads of one core count once: llama.cpp's matrix work does not gain from a
    second thread on the same core, and it loses when a thread waits for a busy sibling.
    A CPU whose topology cannot be read counts as a core of its own.
    """
    if cpus is None:
        cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(_count())
    cores: set[tuple[str, str]] = set()
    for cpu in cpus:
        topology = sysfs / f"cpu{cpu}" / "topology"
        try:
            package = (topology / "physical_package_id").read_text().strip()
            core = (topology / "core_id").read_text().strip()
        except OSError:
            cores.add(("cpu", str(cpu)))
            continue
        cores.add((package, core))
    return max(1, len(cores))


def _count() -> int:
    return os.cpu_count() or 1


def _threads_value(text: str, where: str) -> int:
    try:
        threads = int(text)
    except ValueError:
        threads = 0
    if threads < 1:
        raise ConfigurationError(f"{where}: threads must be a whole number >= 1, not {text!r}")
    return threads


def default_threads() -> int:
    """`LOOPWRIGHT_LOCAL_THREADS` if set, else the physical cores this process may use."""
    configured = os.environ.get(THREADS_ENV)
    if configured:
        return _threads_value(configured, THREADS_ENV)
    return physical_cores()


def parse_local_spec(rest: str) -> tuple[str, int | None]:
    """`small?threads=4` -> ("small", 4); `""` -> ("", None) (the default thread count)."""
    name, mark, query = rest.partition("?")
    threads: int | None = None
    where = f"model spec 'local{':' if name else ''}{rest}'"
    for pair in query.split("&") if mark else ():
        key, _, value = pair.partition("=")
        if key not in OPTIONS:
            known = ", ".join(OPTIONS)
            raise ConfigurationError(f"{where}: unknown option {key!r} (known: {known})")
        threads = _threads_value(value, where)
    return name, threads


def spec_with_threads(spec: str, threads: int | None) -> str:
    """`--threads N` folded into a model spec: `local` -> `local?threads=N`.

    None leaves the spec as it is; a spec for another provider is refused (its threads are
    the server's business)."""
    if threads is None:
        return spec
    prefix = spec.partition(":")[0].partition("?")[0]
    if prefix != "local":
        raise ConfigurationError(
            f"--threads is for the embedded model (--model local...); {spec!r} runs elsewhere"
        )
    where = f"--threads {threads}"
    _threads_value(str(threads), where)
    base, mark, query = spec.partition("?")
    kept = [p for p in query.split("&") if p and not p.startswith("threads=")] if mark else []
    return f"{base}?{'&'.join([*kept, f'threads={threads}'])}"
