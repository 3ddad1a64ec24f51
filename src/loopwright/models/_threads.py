"""How many threads the embedded model uses for a call: the cores that are free now.

llama.cpp's threads meet at a barrier after every operation of every layer. When another
process holds one of the cores, the thread that waits for it stalls every token: on the
2-core machines here, two threads beside one busy process made a run 2.2x slower, beside
another model ~20x. So, unless the user fixed a count (`--threads N`, `?threads=N`,
LOOPWRIGHT_LOCAL_THREADS), each call takes as many threads as there are physical cores
that the rest of the machine left free over the last second or two, at least one.

- **Measured from /proc/stat**: the busy time of the CPUs this process may use, less this
  process's own CPU time over the same window (its own threads are not a neighbour). A
  sampler thread reads it every `SAMPLE_S`, so a call never waits for a measurement.
- **A short spin at the barrier**: the llama.cpp in the `local` extra is built with
  OpenMP, whose barrier spins (GOMP_SPINCOUNT, 300,000 rounds, several milliseconds, by
  default) before it sleeps; a thread spinning for a partner that is not running takes the
  core that partner needs. `GOMP_SPINCOUNT=10000` (a fraction of a millisecond: longer
  than two running threads wait for each other, far shorter than a descheduled one) then
  sleep; and when the cores are shared a call runs on one thread, which meets no barrier.
  libgomp reads it once, when it loads (the first `import llama_cpp`), so it is set before
  that when the user has not chosen a wait policy.
- **Answers do not depend on it**: with this build (plain CPU buffers, no flash attention)
  each output value is computed by one thread whatever their number, and the logits are the
  same bit for bit with 1, 2 and 3 threads (docs/models.md), so greedy replies are too.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from loopwright.models._local_spec import physical_cores

PROC_STAT = Path("/proc/stat")
SAMPLE_S = 0.5
"""How often the sampler reads /proc/stat."""
WINDOW_S = 2.0
"""The window a thread count is chosen from: the last samples covering about this long."""
SPARE = 0.3
"""A core counts as free when the others use less than 1 - SPARE of it (0.7 busy: not)."""
WAIT_POLICY = {"GOMP_SPINCOUNT": "10000"}
"""Set before llama.cpp's OpenMP runtime loads, unless the user set a wait policy."""


def quiet_barriers() -> None:
    """Make llama.cpp's OpenMP threads sleep soon at a barrier instead of spinning for
    milliseconds, unless the user chose (OMP_WAIT_POLICY or GOMP_SPINCOUNT set). Only
    effective before the first `import llama_cpp` in this process."""
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return
    os.environ.update(WAIT_POLICY)


@dataclass(frozen=True)
class Sample:
    at: float
    """time.monotonic() of the reading."""
    busy: float
    """Busy seconds of the CPUs watched, summed, since boot."""
    own: float
    """This process's CPU seconds (all its threads), since it started."""


def _cpus_watched() -> set[int]:
    return os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()


def read_sample(stat: Path = PROC_STAT, cpus: set[int] | None = None) -> Sample | None:
    """One reading of /proc/stat (None where there is none: not Linux)."""
    watched = _cpus_watched() if cpus is None else cpus
    try:
        lines = stat.read_text().splitlines()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    busy = 0
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu":
            continue
        if watched and int(name[3:]) not in watched:
            continue
        # user nice system idle iowait irq softirq steal: all but idle and iowait are taken
        values = [int(v) for v in rest.split()[:8]]
        busy += sum(values) - values[3] - values[4]
    return Sample(time.monotonic(), busy / ticks, time.process_time())


def others_busy(old: Sample, new: Sample) -> float:
    """Cores the rest of the machine kept busy between two samples."""
    wall = new.at - old.at
    if wall <= 0:
        return 0.0
    return max(0.0, ((new.busy - old.busy) - (new.own - old.own)) / wall)


def threads_for(free: float, cores: int) -> int:
    """Threads for `free` cores (fractions: a core is free when less than 1 - SPARE of it is
    taken), between 1 and `cores`."""
    return max(1, min(cores, int(free + SPARE)))


class CoreWatch:
    """Samples /proc/stat in the background; `threads()` is the count for a call now."""

    def __init__(self, cores: int | None = None, stat: Path = PROC_STAT) -> None:
        self.cores = cores or physical_cores()
        self.cpus = len(_cpus_watched()) or self.cores
        self._stat = stat
        self._samples: deque[Sample] = deque(maxlen=int(WINDOW_S / SAMPLE_S) + 2)
        self._lock = threading.Lock()
        self._started = False

    def begin(self) -> None:
        """Start sampling (once): a model starts it when it is made, so that its first call
        has a window to choose from."""
        with self._lock:
            if self._started:
                return
            self._started = True
        first = read_sample(self._stat)
        if first is None:
            return
        with self._lock:
            self._samples.append(first)
        thread = threading.Thread(target=self._sample, name="loopwright-cores", daemon=True)
        thread.start()

    def _sample(self) -> None:
        while True:
            time.sleep(SAMPLE_S)
            sample = read_sample(self._stat)
            if sample is not None:
                with self._lock:
                    self._samples.append(sample)

    def others(self) -> float | None:
        """Cores the rest of the machine used over the last window; None when unknown."""
        self.begin()
        with self._lock:
            samples = list(self._samples)
        now = read_sample(self._stat)
        if now is None or not samples:
            return None
        oldest = next((s for s in samples if now.at - s.at <= WINDOW_S), samples[-1])
        if now.at - oldest.at < 0.2:
            return None  # too short a window to say anything
        return others_busy(oldest, now)

    def threads(self) -> int:
        """All the physical cores, less those the rest of the machine keeps busy (at least
        one); all of them when nothing could be measured (yet)."""
        others = self.others()
        if others is None:
            return self.cores
        free = min(self.cores, self.cpus - others)
        return threads_for(free, self.cores)


_WATCH: CoreWatch | None = None
_WATCH_GUARD = threading.Lock()


def core_watch() -> CoreWatch:
    """This process's one sampler (started when first asked)."""
    global _WATCH
    with _WATCH_GUARD:
        if _WATCH is None:
            _WATCH = CoreWatch()
        return _WATCH
