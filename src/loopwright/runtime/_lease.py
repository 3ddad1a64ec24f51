"""LeaseKeeper: this process's claim on the runs it is executing, renewed by a heartbeat.

A run is `running` only while some process holds an unexpired lease on it. The keeper
takes the lease when a run starts (or is resumed), renews every lease it holds from a
daemon thread every `ttl_s / 3` seconds (so a long model or tool call does not let it
lapse), and releases it when the run finishes. If the process dies, the lease lapses
after at most `ttl_s` and the store reports the run as `interrupted`.

A lease whose owner is a process on this host that no longer exists is taken over at
once (owners are `host:pid:random`): a resume right after a crash need not wait.
"""

from __future__ import annotations

import threading

from loopwright.errors import ResumeConflict, StoreError
from loopwright.store import RunStore
from loopwright.store._owners import new_owner_id, owner_is_gone

DEFAULT_LEASE_TTL_S = 30.0


class LeaseKeeper:
    def __init__(
        self, store: RunStore, *, owner: str | None = None, ttl_s: float = DEFAULT_LEASE_TTL_S
    ) -> None:
        self.store = store
        self.owner = owner or new_owner_id()
        self.ttl_s = ttl_s
        self.held: set[str] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, run_id: str) -> None:
        """Take the run's lease; ResumeConflict if another live process holds it."""
        if not self.store.acquire_lease(run_id, self.owner, self.ttl_s):
            lease = self.store.lease(run_id)
            if lease is not None and owner_is_gone(lease.owner):
                self.store.release_lease(run_id, lease.owner)
                if self.store.acquire_lease(run_id, self.owner, self.ttl_s):
                    return self._held(run_id)
            holder = f" by {lease.owner}" if lease is not None else ""
            raise ResumeConflict(
                f"run {run_id} is being executed{holder}: it cannot be resumed twice at "
                f"once (its lease lapses {self.ttl_s:g}s after that process stops)"
            )
        self._held(run_id)

    def hold_as_read(self, run_id: str, last_seq: int) -> None:
        """Take the lease of a run to resume, read at event `last_seq`; ResumeConflict if
        another process holds it, or took it, moved the run on and let go before this one
        came (two resumes at once: the later one must not replay a log that has grown)."""
        self.hold(run_id)
        record = self.store.get_run(run_id)
        if record is None or record.last_seq != last_seq:
            self.release(run_id)
            now = "gone" if record is None else f"at event {record.last_seq}, {record.status}"
            raise ResumeConflict(
                f"run {run_id} was resumed elsewhere while this resume started: it was read at "
                f"event {last_seq} and is now {now}"
            )

    def _held(self, run_id: str) -> None:
        with self._lock:
            self.held.add(run_id)
            if self._thread is None or self._wake.is_set() or not self._thread.is_alive():
                self._wake = threading.Event()  # a fresh one: an ending thread keeps its own
                self._thread = threading.Thread(
                    target=self._heartbeat, args=(self._wake,), name="loopwright-lease", daemon=True
                )
                self._thread.start()

    def release(self, run_id: str) -> None:
        with self._lock:
            if run_id not in self.held:
                return
            self.held.discard(run_id)
            if not self.held:
                self._wake.set()
        self.store.release_lease(run_id, self.owner)

    def beat(self) -> list[str]:
        """Renew every lease held now; the runs whose lease was lost to another owner."""
        with self._lock:
            runs = sorted(self.held)
        lost = []
        for run_id in runs:
            try:
                if not self.store.acquire_lease(run_id, self.owner, self.ttl_s):
                    lost.append(run_id)
            except StoreError:
                continue  # a busy or closed store: try again at the next beat
        return lost

    def _heartbeat(self, wake: threading.Event) -> None:
        while not wake.wait(self.ttl_s / 3):
            self.beat()
            with self._lock:
                if not self.held:
                    return

    def close(self) -> None:
        """Release every lease held (a run left unfinished then shows as interrupted)."""
        for run_id in sorted(self.held):
            self.release(run_id)
        self._wake.set()
