"""The frozen content store of each schema version (tests/fixtures/temporal/content_vN.sql,
SQL dumps made once by make_temporal_content.py) still loads, opens (an older one is
upgraded to the current version) and reads the same; from v3 on, and in an upgraded one,
NUL and lone surrogates are kept; from v4 on, a model call's messages are sealed with the
payload key (the fixture's: temporal/content.key), bound to their row; a newer schema
than this loopwright reads is refused by name."""

from __future__ import annotations

import base64
from pathlib import Path

import psycopg
import pytest

from loopwright.engines.temporal._codec import PayloadCipher
from loopwright.engines.temporal._content import SCHEMA, VERSION, ContentStore
from loopwright.engines.temporal._refs import digest_of
from loopwright.errors import ConfigurationError, StoreError
from loopwright.messages import Message, ToolResult
from loopwright.store import LocalPostgres

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "temporal"
RUN = "run_fixture_temporal"
LONG = "0123456789abcdefghijklmnopqrstuvwxyz\n" * 100
ODD = "a\x00b\ud800c"
CIPHER = PayloadCipher(base64.b64decode((FIXTURES / "content.key").read_text()))


def _load(server: LocalPostgres, name: str, version: int = 1) -> str:
    url = server.create_database(name)
    lines = (FIXTURES / f"content_v{version}.sql").read_text().splitlines()
    script = "\n".join(line for line in lines if not line.startswith("\\"))
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(script.encode())
    return url


@pytest.mark.parametrize("version", [1, 2, 3, 4])
def test_each_frozen_content_store_opens_and_reads_the_same(
    pg_server: LocalPostgres, version: int
) -> None:
    content = ContentStore(_load(pg_server, f"content_v{version}", version), cipher=CIPHER)
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
        expected = {digest_of(LONG): LONG} if version >= 2 else {}
        assert content.blobs(RUN, [digest_of(LONG)]) == expected
        content.save_blobs(RUN, {digest_of("x" * 3000): "x" * 3000})  # v1 was upgraded
        assert content.blobs(RUN, [digest_of("x" * 3000)]) == {digest_of("x" * 3000): "x" * 3000}
        if version >= 3:
            assert_odd_text(content, "call_4_0", 1)
        else:  # upgraded: it takes such text now
            content.save_request(RUN, 1, [Message.user(ODD), Message.assistant(ODD)])
            content.claim_tool_call(f"{RUN}:call_4_0", RUN)
            odd = ToolResult("call_4_0", "echo", ODD, truncated=True)
            content.finish_tool_call(f"{RUN}:call_4_0", odd, ODD * 1000)
            content.save_blobs(RUN, {digest_of(ODD * 1000): ODD * 1000})
            assert_odd_text(content, "call_4_0", 1)
    finally:
        content.close()


def assert_odd_text(content: ContentStore, call_id: str, call: int) -> None:
    """NUL and a lone surrogate read back exactly, wherever the content store keeps text."""
    assert content.load_request(RUN, call) == [Message.user(ODD), Message.assistant(ODD)]
    assert content.tool_call(f"{RUN}:{call_id}") == (
        "done",
        ToolResult(call_id, "echo", ODD, truncated=True),
        1,
    )
    assert content.full_result(f"{RUN}:{call_id}") == ODD * 1000
    assert content.blobs(RUN, [digest_of(ODD * 1000)]) == {digest_of(ODD * 1000): ODD * 1000}


def test_a_newer_content_store_is_refused(pg_server: LocalPostgres) -> None:
    url = _load(pg_server, "content_newer")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"INSERT INTO {SCHEMA}.version VALUES ({VERSION + 1})")
    with pytest.raises(StoreError, match=f"schema version {VERSION + 1}.*upgrade loopwright"):
        ContentStore(url, cipher=CIPHER)


def test_the_messages_are_sealed_and_bound_to_their_row(pg_server: LocalPostgres) -> None:
    """The database holds no text of a model call's messages (they hold the request as it
    was given, and the model's replies); moved to another row, they do not open."""
    url = _load(pg_server, "content_sealed", 4)
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(f"SELECT messages::text FROM {SCHEMA}.requests").fetchall()
        assert len(rows) == 2 and all("say hello" not in r[0] and "sealed" in r[0] for r in rows)
        conn.execute(
            f"INSERT INTO {SCHEMA}.requests (run_id, call, messages) SELECT run_id, 5, messages "
            f"FROM {SCHEMA}.requests WHERE call = 0"
        )
    content = ContentStore(url, cipher=CIPHER)
    try:
        assert content.load_request(RUN, 0)[1] == Message.user("say hello")
        with pytest.raises(ConfigurationError, match=r"model call 5 .* does not open"):
            content.load_request(RUN, 5)
    finally:
        content.close()
    other = ContentStore(url, cipher=PayloadCipher(b"o" * 32))
    try:
        with pytest.raises(ConfigurationError, match="was sealed with key"):
            other.load_request(RUN, 0)
    finally:
        other.close()
