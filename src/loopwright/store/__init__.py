"""Run stores: the durable log behind every run."""

from loopwright.store._base import GateDecision, Lease, RunRecord, RunStore, StoredStatus
from loopwright.store._memory import InMemoryRunStore, record_after
from loopwright.store._open import DEFAULT_STORE_PATH, STORE_ENV, default_store_path, open_store
from loopwright.store._schema import SCHEMA_VERSION
from loopwright.store._sqlite import SqliteRunStore

__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "GateDecision",
    "InMemoryRunStore",
    "Lease",
    "RunRecord",
    "RunStore",
    "SqliteRunStore",
    "StoredStatus",
    "default_store_path",
    "open_store",
    "record_after",
]
