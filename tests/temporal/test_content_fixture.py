"""The frozen content store of schema v1 (tests/fixtures/temporal/content_v1.sql, a SQL dump
made once by make_temporal_content.py) still loads, opens and reads the same; a newer
schema than this loopwright reads is refused by name."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from loopwright.engines.temporal._content import SCHEMA, VERSION, ContentStore
from loopwright.errors import StoreError
from loopwright.messages import Message, ToolResult
from loopwright.store._pg_local import LocalPostgres

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "temporal" / "content_v1.sql"
RUN = "run_fixture_temporal"


def _load_v1(server: LocalPostgres, name: str) -> str:
    url = server.create_database(name)
    lines = FIXTURE.read_text().splitlines()
    script = "\n".join(line for line in lines if not line.startswith("\\"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(script.encode())
    return url


def test_the_v1_content_store_opens_and_reads_the_same(pg_server: LocalPostgres) -> None:
    content = ContentStore(_load_v1(pg_server, "content_v1"))
    try:
        assert content.load_request(RUN, 0) == [
            Message.system("be brief"),
            Message.user("say hello"),
        ]
        assert content.tool_call(f"{RUN}:call_1_0") == (
            "done",
            ToolResult("call_1_0", "echo", "hello"),
            1,
        )
        state, result, _ = content.tool_call(f"{RUN}:call_2_0") or ("", None, 0)
        assert state == "done" and result is not None and result.truncated
        assert content.full_result(f"{RUN}:call_2_0") == "abc" * 10_000
        assert content.tool_call(f"{RUN}:call_3_0") == ("started", None, 1)
        # a worker that finds only `started` for its key does not run the tool again
        assert content.claim_tool_call(f"{RUN}:call_3_0", RUN) == ("started", None)
    finally:
        content.close()


def test_a_newer_content_store_is_refused(pg_server: LocalPostgres) -> None:
    url = _load_v1(pg_server, "content_v2")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {SCHEMA}.version VALUES ({VERSION + 1})")
    with pytest.raises(StoreError, match=f"schema version {VERSION + 1}.*upgrade loopwright"):
        ContentStore(url)
