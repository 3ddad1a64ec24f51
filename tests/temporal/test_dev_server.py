"""The dev server `start_dev_server` starts (the suite's, as `loopwright dev temporal` starts
one) leaves nothing open in the process that started it: its log is the child's. A server
whose port accepts connections but never answers is not taken for started: the wait is
bounded, says which server and how long, and stops it."""

from __future__ import annotations

import os
import socket
import sys
import time
from pathlib import Path

import pytest

from loopwright.engines.temporal._devserver import DevServer, _free_port, start_dev_server
from loopwright.errors import ConfigurationError

SILENT_SERVER = """\
import socket, sys
port = int(sys.argv[sys.argv.index("--port") + 1])
listener = socket.create_server(("127.0.0.1", port))
held = []
while True:  # accepts connections and never answers, as a frontend not ready yet
    held.append(listener.accept()[0])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/fd")
def test_the_starter_holds_no_descriptor_of_the_servers_log(temporal_server: DevServer) -> None:
    held = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            held.append(os.readlink(fd))
        except OSError:  # the descriptor iterdir itself held, closed by now
            continue
    assert str(temporal_server.log) not in held


@pytest.mark.subprocess
def test_a_port_that_accepts_but_never_answers_is_a_bounded_wait_then_an_error(
    tmp_path: Path,
) -> None:
    silent = tmp_path / "temporal"
    silent.write_text(f"#!{sys.executable}\n{SILENT_SERVER}")
    silent.chmod(0o755)
    port = _free_port()
    began = time.monotonic()
    with pytest.raises(ConfigurationError) as raised:
        start_dev_server(silent, port=port, timeout_s=2)
    took = time.monotonic() - began
    assert f"the Temporal dev server at 127.0.0.1:{port} did not answer in 2 s" in str(raised.value)
    assert 2 <= took < 30  # the timeout, plus stopping the server on a loaded machine
    log = Path(str(raised.value).rsplit("its log: ", 1)[1])
    assert log.is_file()  # kept: the error names it
    log.unlink()
    with pytest.raises(ConnectionRefusedError):  # stopped: nothing listens there any more
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
