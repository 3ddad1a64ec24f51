"""A secrets file is read only when it is a regular file of at most 1 MiB: a FIFO would keep
every run waiting for a writer, a device or a huge file would be read without end. And a
project file's `secrets_file` needs trust whatever it names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_run import loopwright_process, script

from loopwright.errors import ConfigurationError
from loopwright.safety.scrub import MAX_SECRETS_FILE_BYTES, read_secrets_file


@pytest.mark.subprocess
def test_a_fifo_named_by_the_user_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "secrets.fifo"
    os.mkfifo(fifo)
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "ok"}])
    done = loopwright_process(
        "run", "hi", "--model", model, "--secrets-file", str(fifo), home=tmp_path, timeout=60
    )  # without the check: no writer ever comes, and the run waits for good
    assert done.code == 2
    assert done.err.splitlines() == [
        f"loopwright: error: secrets file {fifo} is a FIFO (named pipe), not a regular file"
    ]


@pytest.mark.subprocess
def test_an_untrusted_projects_fifo_secrets_file_is_not_read(tmp_path: Path) -> None:
    project = tmp_path / "cloned"
    project.mkdir()
    os.mkfifo(project / "s.fifo")
    (project / "loopwright.toml").write_text('[run]\nsecrets_file = ["s.fifo"]\n')
    model = script(tmp_path / "s.json", [{"thought": "t", "final_answer": "ok"}])
    done = loopwright_process("run", "hi", "--model", model, home=tmp_path, cwd=project, timeout=60)
    assert done.code == 0, done.err
    assert "ignoring run.secrets_file (it picks files every run reads" in done.err


def test_a_device_or_a_huge_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match=r"^secrets file /dev/null is a device, not a"):
        read_secrets_file("/dev/null")
    huge = tmp_path / "huge.env"
    with huge.open("wb") as file:
        file.truncate(MAX_SECRETS_FILE_BYTES + 1)
    with pytest.raises(ConfigurationError, match=f"is larger than {MAX_SECRETS_FILE_BYTES} bytes"):
        read_secrets_file(huge)
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ConfigurationError, match=r"cannot read secrets file .*: Is a directory"):
        read_secrets_file(folder)
    fine = tmp_path / "fine.env"
    fine.write_text("# a comment\nTOKEN=hunter2-very-secret\nplain-secret-value\n")
    assert read_secrets_file(fine) == ["hunter2-very-secret", "plain-secret-value"]
