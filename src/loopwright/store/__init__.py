"""Run stores: the durable log behind every run."""

from typing import TYPE_CHECKING

from loopwright._moved import moved
from loopwright.store._base import GateDecision, Lease, RunRecord, RunStore
from loopwright.store._open import PersistentStore, open_store
from loopwright.store._pg_errors import redact_url
from loopwright.store._pg_local import LocalPostgres, start_local_postgres
from loopwright.store._postgres import PostgresRunStore
from loopwright.store._sqlite import SqliteRunStore
from loopwright.store._turns import conversation_turns

__all__ = [
    "GateDecision",
    "Lease",
    "LocalPostgres",
    "PersistentStore",
    "PostgresRunStore",
    "RunRecord",
    "RunStore",
    "SqliteRunStore",
    "conversation_turns",
    "open_store",
    "redact_url",
    "start_local_postgres",
]

if TYPE_CHECKING:
    from loopwright.store._memory import InMemoryRunStore as InMemoryRunStore


def __getattr__(name: str) -> object:
    if name == "InMemoryRunStore":  # a test double: loopwright.testing
        return moved(__name__, name, "loopwright.testing")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
