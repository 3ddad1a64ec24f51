"""A store URL's password (or a model server's) never appears in what loopwright prints:
`config show` (table and JSON), the error for a PostgreSQL URL libpq cannot read, and a
URL that names no store loopwright knows (which once became a SQLite file whose path
held the password)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import loopwright

PASSWORD = "S3cretPw9x"


def test_config_show_masks_the_password_of_every_url(tmp_path: Path) -> None:
    (tmp_path / "loopwright.toml").write_text(
        f'store = "postgresql://app:{PASSWORD}@db.internal/runs"\n'
        f'base_url = "https://user:{PASSWORD}@llm.internal/v1"\n'
    )
    untrusted = loopwright("config", "show", home=tmp_path, drop=("LOOPWRIGHT_STORE",))
    assert untrusted.code == 0 and PASSWORD not in untrusted.both  # both settings ignored
    assert loopwright("config", "trust", home=tmp_path).code == 0
    for args in (("config", "show"), ("config", "show", "--json")):
        done = loopwright(*args, home=tmp_path, drop=("LOOPWRIGHT_STORE",))
        assert done.code == 0, done.both
        assert PASSWORD not in done.both
        assert "postgresql://app:***@db.internal/runs" in done.out
        assert "https://user:***@llm.internal/v1" in done.out
    env = loopwright("config", "show", home=tmp_path,
                     LOOPWRIGHT_STORE=f"postgresql://app:{PASSWORD}@other/runs")  # fmt: skip
    assert PASSWORD not in env.both and "postgresql://app:***@other/runs" in env.out


@pytest.mark.parametrize(
    "url",
    [
        f"postgresql://app:{PASSWORD}@[::1/runs",  # urlsplit refuses it; libpq quotes it
        f"postgresql://app:{PASSWORD}@db/runs?password={PASSWORD}&bogus=1",
        f"postgres://app:{PASSWORD}@[::1]:notaport/runs",
    ],
)
def test_a_postgres_url_libpq_refuses_is_quoted_without_its_password(
    tmp_path: Path, url: str
) -> None:
    pytest.importorskip("psycopg")
    done = loopwright("runs", "list", "--store", url, home=tmp_path)
    assert done.code != 0 and "Traceback" not in done.both
    assert PASSWORD not in done.both and "***" in done.both


@pytest.mark.parametrize(
    "url",
    [
        f"mysql://app:{PASSWORD}@db/runs",
        f"postgresql+psycopg://app:{PASSWORD}@db/runs",
        f"postgresql:/app:{PASSWORD}@db/runs",
    ],
)
def test_a_url_that_names_no_known_store_is_refused(tmp_path: Path, url: str) -> None:
    done = loopwright("runs", "list", "--store", url, home=tmp_path)
    assert done.code == 2 and PASSWORD not in done.both
    assert "is a URL of a kind loopwright cannot use" in done.err
    assert not any(PASSWORD in str(path) for path in tmp_path.rglob("*"))
