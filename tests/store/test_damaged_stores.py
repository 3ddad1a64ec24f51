"""A SQLite store with damaged pages, a full disk or no write access: a clear error naming
the file and what to do (never a raw sqlite3 traceback), the run left interrupted and
resumable, and a read-only store still listed and shown."""

from __future__ import annotations

import asyncio
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_helpers import TOOLS_FILE, line_script, line_spec, lines, recorded_run, write_script

from loopwright.cli import main
from loopwright.errors import StoreError
from loopwright.events import (
    IterationStartedEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
)
from loopwright.runtime import resume_run
from loopwright.store import SqliteRunStore

CALLS = 6


def agent_command(folder: Path) -> list[str]:
    script = write_script(folder, line_script(folder / "lines.txt", CALLS, "append_line"))
    return [
        sys.executable, "-m", "loopwright", "run", f"write {CALLS} lines",
        "--model", f"scripted:{script}", "--tools", f"{TOOLS_FILE}:append_line",
        "--store", str(folder / "runs.db"), "--workspace", str(folder),
        "--max-iterations", str(CALLS + 2), "--no-progress-limit", str(CALLS + 2),
    ]  # fmt: skip


@pytest.mark.subprocess
def test_a_full_disk_stops_the_run_with_a_clear_error_and_it_resumes(tmp_path: Path) -> None:
    SqliteRunStore(tmp_path / "runs.db").close()  # the store exists; its WAL will grow

    def small_disk() -> None:  # files this process writes stop growing at 48 KiB
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (48 * 1024, 48 * 1024))

    result = subprocess.run(
        agent_command(tmp_path), capture_output=True, text=True, preexec_fn=small_disk, timeout=120
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "sqlite3." not in result.stderr
    assert f"run store {tmp_path / 'runs.db'}" in result.stderr
    assert "loopwright runs resume" in result.stderr, result.stderr
    store = SqliteRunStore(tmp_path / "runs.db")
    [record] = store.list_runs()
    assert record.status == "interrupted" and 1 < record.last_seq < 1 + 4 * CALLS
    written = lines(tmp_path / "lines.txt")
    assert len(written) < CALLS

    result_after = asyncio.run(resume_run(store, record.run_id))
    assert result_after.success
    events = store.events(record.run_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert len(calls) == CALLS
    assert len(lines(tmp_path / "lines.txt")) == len(set(lines(tmp_path / "lines.txt")))


def test_a_store_that_fills_up_says_the_disk_is_full_and_keeps_what_it_had(
    tmp_path: Path,
) -> None:
    store = SqliteRunStore(tmp_path / "runs.db")
    store.append(
        RunStartedEvent(
            run_id="r1",
            seq=1,
            ts=1.0,
            request="r",
            kind="agent",
            model="m",
            tools=[],
            options={},
            tenant="default",
        )
    )
    pages = store._conn.execute("PRAGMA page_count").fetchone()[0]
    store._conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL
    big = "x" * 20_000
    with pytest.raises(StoreError, match=r"the disk is full .*free some space.*runs resume"):
        store.append_many(
            [
                IterationStartedEvent(
                    run_id="r1", seq=s, ts=float(s), max_iterations=s, iteration_number=1
                )
                for s in (2, 3)
            ]
            + [
                RunFinishedEvent(
                    run_id="r1",
                    seq=4,
                    ts=4.0,
                    answer=big,
                    status="completed",
                    reason=None,
                    usage={},
                    cost=0.0,
                    steps=0,
                    partial=None,
                )
            ]
        )
    assert [e.seq for e in SqliteRunStore(tmp_path / "runs.db").events("r1")] == [1]
    store._conn.execute("PRAGMA max_page_count = 1000000")  # space again: it goes on
    store.append(
        IterationStartedEvent(run_id="r1", seq=2, ts=2.0, iteration_number=1, max_iterations=10)
    )


def test_damaged_pages_are_a_clear_error_naming_the_recovery(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "runs.db"
    store = SqliteRunStore(path)
    store.append_many(recorded_run(line_spec(tmp_path, 3)))
    store.close()
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    data[2 * 4096 : len(data)] = b"\xa5" * (len(data) - 2 * 4096)  # every page after the second
    path.write_bytes(bytes(data))
    code = main(["runs", "show", "run_test", "--store", str(path)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"run store {path} is damaged" in err and ".recover" in err


@pytest.fixture
def read_only_store(tmp_path: Path) -> Iterator[Path]:
    """A store whose file and folder cannot be written (chmod; as root, chattr +i)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "runs.db"
    store = SqliteRunStore(path)
    store.append_many(recorded_run(line_spec(tmp_path, 1)))
    store.append(
        RunStartedEvent(
            run_id="r_cut",
            seq=1,
            ts=1.0,
            request="cut",
            kind="agent",
            model="m",
            tools=[],
            options={},
            tenant="default",
        )
    )
    store.close()
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        done = chattr and subprocess.run([chattr, "+i", str(path), str(folder)]).returncode == 0
        if not done:
            pytest.skip("cannot make a file read-only for root here (chattr +i refused)")
        yield path
        subprocess.run([str(chattr), "-i", str(path), str(folder)], check=True)
    else:
        path.chmod(0o444)
        folder.chmod(0o555)
        yield path
        folder.chmod(0o755)
        path.chmod(0o644)


@pytest.mark.subprocess
def test_a_read_only_store_is_listed_and_shown_and_says_why_it_cannot_write(
    read_only_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "list", "--store", str(read_only_store)]) == 0
    out = capsys.readouterr().out
    assert "run_test" in out and "r_cut" in out
    assert main(["runs", "show", "run_test", "--store", str(read_only_store)]) == 0
    assert "completed" in capsys.readouterr().out
    assert main(["runs", "export", "run_test", "--store", str(read_only_store)]) == 0
    capsys.readouterr()
    assert main(["runs", "resume", "r_cut", "--store", str(read_only_store)]) in (1, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    store = SqliteRunStore(read_only_store)
    assert store.read_only is not None
    with pytest.raises(StoreError, match=r"is read-only .*can be listed, shown and exported"):
        store.append(
            IterationStartedEvent(
                run_id="r_cut", seq=2, ts=2.0, iteration_number=1, max_iterations=10
            )
        )


def test_a_folder_given_as_the_store_is_a_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(StoreError, match=r"is a folder: give the path of a file in it"):
        SqliteRunStore(tmp_path)
    script = tmp_path / "script.json"
    script.write_text('["{\\"final_answer\\": \\"hi\\"}"]', encoding="utf-8")
    code = main(["run", "hi", "--model", f"scripted:{script}", "--store", str(tmp_path)])
    assert code != 0
    assert f"run store {tmp_path} is a folder" in capsys.readouterr().err
