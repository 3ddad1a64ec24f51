"""The dev server `start_dev_server` starts (the suite's, as `loopwright dev temporal` starts
one) leaves nothing open in the process that started it: its log is the child's."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from loopwright.engines.temporal._devserver import DevServer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_the_starter_holds_no_descriptor_of_the_servers_log(temporal_server: DevServer) -> None:
    held = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            held.append(os.readlink(fd))
        except OSError:  # the descriptor iterdir itself held, closed by now
            continue
    assert str(temporal_server.log) not in held
