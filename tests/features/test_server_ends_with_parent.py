"""The llama-cpp-python server the tests start ends when the process that started it dies
(a killed pytest runs no fixture teardown)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).parent

CHILD = f"""
import sys, time
sys.path.insert(0, {str(HERE)!r})
from llama_server_main import end_with_parent
end_with_parent()
print("armed", flush=True)
time.sleep(120)
"""

PARENT = """
import os, subprocess, sys, time
write = int(sys.argv[1])
child = subprocess.Popen([sys.executable, "-c", sys.argv[2]], pass_fds=(write,))
os.close(write)
print(child.pid, flush=True)
time.sleep(120)
"""


@pytest.mark.subprocess
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_server_process_ends_when_its_parent_is_killed() -> None:
    read, write = os.pipe()  # the child holds the write end: EOF here once it is gone
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(write), CHILD],
        pass_fds=(write,), stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(write)
    assert parent.stdout is not None
    try:
        int(parent.stdout.readline())  # the child's pid: it started
        assert parent.stdout.readline().strip() == "armed"  # as a server is, once it runs
        parent.kill()
        parent.wait(timeout=10)
        started = time.monotonic()
        ready, _, _ = select.select([read], [], [], 20)
        # EOF: every copy of the pipe's write end is closed, the child's with its exit
        assert ready and os.read(read, 1) == b"", "the child outlived its parent"
        assert time.monotonic() - started < 20
    finally:
        os.close(read)
        if parent.poll() is None:
            parent.kill()
            parent.wait()
        parent.stdout.close()
