"""Run stores: the durable log behind every run."""

from loopwright.store._base import RunRecord, RunStore, StoredStatus
from loopwright.store._memory import InMemoryRunStore, record_after

__all__ = ["InMemoryRunStore", "RunRecord", "RunStore", "StoredStatus", "record_after"]
