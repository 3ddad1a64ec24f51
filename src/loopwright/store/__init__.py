"""Run stores: the durable log behind every run."""

from typing import TYPE_CHECKING

from loopwright._moved import moved
from loopwright.store._base import (
    FINISHED,
    GateDecision,
    Lease,
    RunRecord,
    RunStore,
    StoredStatus,
    find_run,
)
from loopwright.store._copy import copy_runs
from loopwright.store._memory import memory_store, record_after
from loopwright.store._open import (
    DEFAULT_STORE_PATH,
    STORE_ENV,
    PersistentStore,
    default_store_path,
    open_store,
    store_location,
)
from loopwright.store._owners import new_owner_id, owner_is_gone
from loopwright.store._pg_errors import Redactor, is_postgres_url, redact_url
from loopwright.store._pg_local import LocalPostgres, start_local_postgres
from loopwright.store._pg_schema import PG_SCHEMA_VERSION
from loopwright.store._postgres import PostgresRunStore
from loopwright.store._schema import SCHEMA_VERSION
from loopwright.store._sqlite import SqliteRunStore
from loopwright.store._text import row_text, storable_text
from loopwright.store._turns import conversation_turns

__all__ = [
    "DEFAULT_STORE_PATH",
    "FINISHED",
    "PG_SCHEMA_VERSION",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "GateDecision",
    "Lease",
    "LocalPostgres",
    "PersistentStore",
    "PostgresRunStore",
    "Redactor",
    "RunRecord",
    "RunStore",
    "SqliteRunStore",
    "StoredStatus",
    "conversation_turns",
    "copy_runs",
    "default_store_path",
    "find_run",
    "is_postgres_url",
    "memory_store",
    "new_owner_id",
    "open_store",
    "owner_is_gone",
    "record_after",
    "redact_url",
    "row_text",
    "start_local_postgres",
    "storable_text",
    "store_location",
]

if TYPE_CHECKING:
    from loopwright.store._memory import InMemoryRunStore as InMemoryRunStore


def __getattr__(name: str) -> object:
    if name == "InMemoryRunStore":  # a test double: loopwright.testing
        return moved(__name__, name, "loopwright.testing")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
