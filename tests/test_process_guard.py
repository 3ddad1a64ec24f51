"""The guard of process_guard.py: a test without a marker naming what it starts cannot
start a process, by any of the doors a test might use; a marked one can."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import subprocess
import sys

import pytest

import process_guard
from process_guard import UnmarkedProcessError


def test_an_unmarked_test_cannot_start_a_process_by_any_door(
    request: pytest.FixtureRequest,
) -> None:
    with pytest.raises(UnmarkedProcessError, match="has none of the markers subprocess"):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    with pytest.raises(UnmarkedProcessError):
        asyncio.run(_asyncio_child())
    with pytest.raises(UnmarkedProcessError):
        os.system("true")
    with pytest.raises(UnmarkedProcessError):
        os.posix_spawn("/bin/true", ["true"], dict(os.environ))
    spawn = multiprocessing.get_context("spawn").Process(target=print)
    with pytest.raises(UnmarkedProcessError):
        spawn.start()
    recorded = request.node.stash[process_guard._VIOLATIONS]
    assert len(recorded) == 5, recorded
    recorded.clear()  # this test starts them on purpose: it passes


async def _asyncio_child() -> None:
    child = await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")
    await child.wait()


@pytest.mark.subprocess
def test_the_guard_fails_a_test_that_swallowed_its_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = os.path.dirname(process_guard.__file__)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]))
    pytester.makeconftest(
        "import process_guard\n"
        "def pytest_configure(config):\n"
        "    process_guard.install()\n"
        "    config.pluginmanager.register(process_guard, 'process_guard')\n"
        "    for name in process_guard.STARTS:\n"
        "        config.addinivalue_line('markers', name)\n"
    )
    pytester.makepyfile(
        "import subprocess, sys, pytest\n"
        "def test_swallows():\n"
        "    try:\n"
        "        subprocess.run([sys.executable, '-c', 'pass'])\n"
        "    except Exception:\n"
        "        pass\n"
        "@pytest.mark.subprocess\n"
        "def test_marked():\n"
        "    subprocess.run([sys.executable, '-c', 'pass'], check=True)\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*started a process without a marker naming it*"])


@pytest.mark.subprocess
def test_a_marked_test_starts_processes() -> None:
    assert subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True,
                          text=True, check=True).stdout == "42\n"  # fmt: skip
