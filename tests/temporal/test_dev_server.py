"""The dev server `start_dev_server` starts (the suite's, as `loopwright dev temporal` starts
one) leaves nothing open in the process that started it: its log is the child's. A server
whose port accepts connections but never answers is not taken for started: the wait is
bounded, says which server and how long, and stops it. Nor is another Temporal server that
holds the port (it answers everything but this server's own namespace): the new one could
not bind it, and that is the error. A port taken while the server starts (its own choice,
released, then bound) starts it again on others. The suite's fixture starts a new server
when its server died, and fails the test it died in with the server's log."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from pathlib import Path

import pytest
from temporal_helpers import KeptServer
from temporalio.client import Client

from loopwright._ports import ephemeral_range, server_port
from loopwright.engines.temporal._devserver import DevServer, find_temporal_cli, start_dev_server
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
    port = server_port()
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


def test_a_port_another_temporal_server_holds_is_an_error_not_that_server(
    temporal_server: DevServer,
) -> None:
    """Another frontend on the port answers every call but for this server's namespace:
    taking it for the new server (which exits, unable to bind) would leave its tests on a
    server that goes away with its owner ("cannot reach Temporal ... Connection refused")."""
    taken = temporal_server.port
    with pytest.raises(ConfigurationError, match=f"port {taken} on 127.0.0.1 is in use"):
        start_dev_server(port=taken)
    assert temporal_server.alive()


PORT_TAKEN_ONCE = """\
import os, sys
from pathlib import Path
tries = Path(os.environ["TRIES"])
tries.write_text(tries.read_text() + "x" if tries.exists() else "x")
if len(tries.read_text()) == 1:  # as the server says when a port it chose was taken
    port = sys.argv[sys.argv.index("--http-port") + 1]
    print(f"Error: can't set frontend HTTP port {port}: listen tcp 127.0.0.1:{port}: "
          "bind: address already in use")
    sys.exit(1)
os.execv(os.environ["REAL"], [os.environ["REAL"], *sys.argv[1:]])
"""


@pytest.mark.subprocess
@pytest.mark.temporal
def test_a_port_taken_as_it_starts_starts_it_again_on_other_ports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = find_temporal_cli()
    if real is None:
        pytest.skip("no `temporal` CLI: the temporal extra installs it (make setup)")
    fake = tmp_path / "temporal"
    fake.write_text(f"#!{sys.executable}\n{PORT_TAKEN_ONCE}")
    fake.chmod(0o755)
    monkeypatch.setenv("TRIES", str(tmp_path / "tries"))
    monkeypatch.setenv("REAL", str(real))
    server = start_dev_server(fake)
    try:
        assert (tmp_path / "tries").read_text() == "xx"  # failed once, then started
        low, high = ephemeral_range()
        assert not low <= server.port <= high  # drawn where the kernel hands out none
        assert asyncio.run(_healthy(server.address))
    finally:
        server.stop()


async def _healthy(address: str) -> bool:
    client = await Client.connect(address)
    return await client.service_client.check_health()


@pytest.mark.temporal
def test_a_dead_server_is_reported_and_a_new_one_started(dev_server: KeptServer) -> None:
    """The fixture's side: a server that died is not handed to the next test."""
    dead = dev_server.current()
    dead.process.kill()
    dead.process.wait()
    with pytest.warns(UserWarning, match=r"exited \(-9\) after the test before; its log \("):
        server = dev_server.current()
    try:
        assert server is not dead and server.alive()
        assert asyncio.run(_healthy(server.address))
        assert dead.log.is_file()  # kept for a closer look
    finally:
        dead.log.unlink()


DIES_IN_A_TEST = """\
def test_whose_server_dies(temporal_server):
    temporal_server.process.kill()
    temporal_server.process.wait()


def test_after_it(temporal_server):
    assert temporal_server.alive()


def test_that_kills_it_between_tests(dev_server):
    dev_server.server.process.kill()
    dev_server.server.process.wait()


def test_after_that(temporal_server):
    assert temporal_server.alive()
"""


@pytest.mark.subprocess
@pytest.mark.temporal
def test_a_test_whose_server_died_fails_with_the_servers_log(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = Path(__file__).parent
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(here), str(here.parent)]))
    pytester.makeconftest((here / "conftest.py").read_text())
    pytester.makepyfile(test_dies=DIES_IN_A_TEST)
    pytester.makeini(  # warnings are errors, as in the suite's own settings
        "[pytest]\nfilterwarnings = error\nasyncio_default_fixture_loop_scope = function\n"
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=4, errors=1, warnings=1)  # a death between tests: warned
    result.stdout.re_match_lines(
        [
            r".*ERROR at teardown of test_whose_server_dies.*",
            r".*the Temporal dev server at 127\.0\.0\.1:\d+ exited \(-9\) during this test; its log",
            r".*the Temporal dev server at 127\.0\.0\.1:\d+ exited \(-9\) after the test before",
        ],
        consecutive=False,
    )
