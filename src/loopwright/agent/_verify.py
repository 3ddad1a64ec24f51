"""Verifiers: checks run on the workspace at the end of every run, stopped or not.

A verifier is any `async (workspace: Path) -> VerificationResult`. Two ready-made ones:

- `CommandVerifier`: shell commands (e.g. the project's tests). Each named command is one
  check; a pytest run (`-rA` or `-v`) or TAP output counts each test as a check.
- `CallableVerifier`: a Python function (sync or async) returning a bool, a mapping of
  check name -> bool, or a VerificationResult.

The outcome is `pass` (every check passed), `partial_pass` (some did: `passed` holds what
is done, `failed` what remains) or `fail`. A verifier never raises: a crash, a timeout or
a missing command is a failed check with its reason in `output`.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

from loopwright.agent._setup import Verifier
from loopwright.effects import VerificationResult
from loopwright.tools._process import run_process

DEFAULT_VERIFY_TIMEOUT_S = 600.0
MAX_OUTPUT_CHARS = 20_000
_PYTEST_LINE = re.compile(r"^(\S+::\S+)\s+(PASSED|FAILED|ERROR|XPASS|XFAIL)\b", re.MULTILINE)
_PYTEST_SUMMARY = re.compile(r"^(PASSED|FAILED|ERROR) (\S+::\S+)", re.MULTILINE)
_TAP_LINE = re.compile(r"^(not ok|ok)\s+\d+\s*(?:-\s*)?(.*)$", re.MULTILINE)

CheckResults = bool | Mapping[str, bool] | VerificationResult
VerifierSpec = str | Mapping[str, str] | Callable[[Path], Any]


def outcome_of(passed: tuple[str, ...], failed: tuple[str, ...]) -> VerificationResult:
    """pass / partial_pass / fail from the names of the checks that passed and failed."""
    if passed and not failed:
        return VerificationResult("pass", passed, failed)
    if passed:
        return VerificationResult("partial_pass", passed, failed)
    return VerificationResult("fail", passed, failed)


def checks_in_output(output: str) -> dict[str, bool]:
    """Per-test results found in pytest (`-rA`, `-v`) or TAP output; empty if none."""
    results: dict[str, bool] = {}
    for name, status in _PYTEST_LINE.findall(output):
        results[name] = status in {"PASSED", "XFAIL"}
    for status, name in _PYTEST_SUMMARY.findall(output):
        results.setdefault(name, status == "PASSED")
    if not results:
        for status, name in _TAP_LINE.findall(output):
            results[name.strip() or f"test {len(results) + 1}"] = status == "ok"
    return results


class CommandVerifier:
    """Runs shell commands in the workspace; exit status 0 passes.

    >>> CommandVerifier("pytest -q -rA")                      # one command, tests as checks
    >>> CommandVerifier({"lint": "ruff check .", "tests": "pytest -q"})   # named checks
    """

    def __init__(
        self, commands: str | Mapping[str, str], *, timeout_s: float = DEFAULT_VERIFY_TIMEOUT_S
    ) -> None:
        self.commands = {"command": commands} if isinstance(commands, str) else dict(commands)
        self.timeout_s = timeout_s

    async def __call__(self, workspace: Path) -> VerificationResult:
        results: dict[str, bool] = {}
        outputs: list[str] = []
        for name, command in self.commands.items():
            code, output = await self._run(command, workspace)
            outputs.append(f"$ {command}\n{output}".rstrip())
            per_test = checks_in_output(output) if len(self.commands) == 1 else {}
            if per_test:
                results.update(per_test)
                if code != 0 and all(per_test.values()):
                    results[name] = False  # e.g. a collection error after passing tests
            else:
                results[name] = code == 0
        passed = tuple(n for n, ok in results.items() if ok)
        failed = tuple(n for n, ok in results.items() if not ok)
        result = outcome_of(passed, failed)
        text = "\n\n".join(outputs)
        return VerificationResult(result.outcome, passed, failed, _tail(text))

    async def _run(self, command: str, workspace: Path) -> tuple[int, str]:
        """Exit code and output; at the limit the command and everything it started is
        killed (`tools._process`: its process group and any descendant that left it)."""
        try:
            done = await run_process(command, cwd=workspace, timeout_s=self.timeout_s)
        except OSError as exc:
            return 127, f"could not start: {exc}"
        if done.code is None:
            return 124, f"{done.output}\ntimed out after {self.timeout_s:g}s".lstrip("\n")
        return done.code, done.output


class CallableVerifier:
    """A Python function as a verifier: `fn(workspace)` -> bool, {check: bool} or a result."""

    def __init__(self, function: Callable[[Path], CheckResults | Awaitable[CheckResults]]):
        self.function = function

    async def __call__(self, workspace: Path) -> VerificationResult:
        try:
            value: Any = self.function(workspace)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            name = getattr(self.function, "__name__", "verifier")
            return VerificationResult("fail", (), (name,), f"{type(exc).__name__}: {exc}")
        if isinstance(value, VerificationResult):
            return value
        if isinstance(value, Mapping):
            passed = tuple(str(k) for k, ok in value.items() if ok)
            failed = tuple(str(k) for k, ok in value.items() if not ok)
            return outcome_of(passed, failed)
        name = getattr(self.function, "__name__", "verifier")
        return outcome_of((name,), ()) if value else outcome_of((), (name,))


def as_verifier(spec: VerifierSpec | None) -> Verifier | None:
    """A verifier from a shell command, named commands, or a Python function."""
    if spec is None:
        return None
    if isinstance(spec, str | Mapping):
        return CommandVerifier(spec)
    if isinstance(spec, CommandVerifier | CallableVerifier):
        return spec
    return CallableVerifier(spec)


def _tail(text: str, limit: int = MAX_OUTPUT_CHARS) -> str:
    """The end of a long output: that is where test runners print their summary."""
    if len(text) <= limit:
        return text
    return f"[... {len(text) - limit:,} characters cut ...]\n{text[-limit:]}"
