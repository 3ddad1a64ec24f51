"""`loopwright --version`: the installed package's version and Python's, then exit 0."""

from __future__ import annotations

import platform
from importlib.metadata import version

import pytest

from loopwright.cli import main


def test_version_prints_the_package_and_python_versions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    expected = f"loopwright {version('loopwright')}, Python {platform.python_version()}"
    assert capsys.readouterr().out.strip() == expected
