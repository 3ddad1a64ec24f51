"""Read `loopwright.toml` files and the environment; resolve each setting with its source.

Precedence, highest first: a command-line flag, the environment (`LOOPWRIGHT_<KEY>`), the
project file (`loopwright.toml` in the current folder or the nearest parent that has one),
the user file (`loopwright.toml` in the user config folder), the built-in default. Inside one
file, a key of the command's section (`[run]`) beats the same key at the top of the file.

A project file's settings that run code or widen what a run may touch apply only once the
user trusts the file (config/_trust.py); until then they are left out, in `ignored`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from loopwright.config._schema import (
    SECTIONS,
    SHARED_KEYS,
    BadValue,
    check_value,
    env_name,
    setting,
)
from loopwright.config._trust import TrustState, needs_trust, trust_state
from loopwright.errors import ConfigurationError

T = TypeVar("T")
FILE_NAME = "loopwright.toml"
MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class Resolved:
    """A setting's effective value and where it came from."""

    section: str
    key: str
    value: Any
    source: str
    """flag, environment, project file, user file or built-in."""
    origin: str = ""
    """The variable's name, or FILE:LINE; empty for flags and built-ins."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "key": self.key,
            "value": self.value,
            "source": self.source,
            "origin": self.origin,
        }


@dataclass
class _Layer:
    source: str
    values: dict[tuple[str, str], tuple[Any, str]] = field(default_factory=dict)
    """(section, key) -> (value, origin); section "" holds the top-of-file shared keys."""

    def get(self, section: str, key: str) -> tuple[Any, str] | None:
        found = self.values.get((section, key))
        if found is None and key in SHARED_KEYS:
            found = self.values.get(("", key))
        return found


@dataclass(frozen=True)
class Ignored:
    """A project file's setting left out because the file is not trusted."""

    section: str
    key: str
    origin: str
    reason: str

    @property
    def label(self) -> str:
        return f"{self.section}.{self.key}" if self.section else self.key


@dataclass
class Config:
    """The layers below the command line, highest first."""

    layers: list[_Layer]
    project: Path | None = None
    project_state: TrustState | None = None
    """The project file's trust: trusted, changed (since it was trusted) or untrusted."""
    ignored: list[Ignored] = field(default_factory=list)

    def ignored_line(self, section: str) -> str | None:
        """One line naming the project file's settings this command leaves out, and why."""
        left_out = [item for item in self.ignored if item.section in (section, "")]
        if not left_out or self.project is None:
            return None
        names = ", ".join(f"{item.label} ({item.reason})" for item in left_out)
        why = "changed since you trusted it" if self.project_state == "changed" else "not trusted"
        return (
            f"loopwright: ignoring from {self.project} ({why}): {names}; "
            f"`loopwright config trust {self.project}` uses them"
        )

    def resolve(self, section: str, key: str, flag: Any = None) -> Resolved:
        if flag is not None:
            return Resolved(section, key, flag, "flag")
        for layer in self.layers:
            found = layer.get(section, key)
            if found is not None:
                return Resolved(section, key, found[0], layer.source, found[1])
        return Resolved(section, key, setting(section, key).default, "built-in")

    def section(self, section: str) -> list[Resolved]:
        return [self.resolve(section, item.key) for item in SECTIONS[section]]


def user_config_file() -> Path:
    return Path(platformdirs.user_config_dir("loopwright")) / FILE_NAME


def project_config_file(start: Path) -> Path | None:
    """`loopwright.toml` in `start` or the nearest parent folder that has one."""
    for folder in (start, *start.parents):
        candidate = folder / FILE_NAME
        if candidate.is_file():
            return candidate
    return None


def load_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The environment, project and user layers. Every bad key or value of every layer is
    one ConfigurationError, a line each, naming the file (or variable), the line and the key."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    layers = [_collect(problems, lambda: _env_layer(env), _Layer("environment"))]
    project = project_config_file((cwd or Path.cwd()).resolve())
    user = user_config_file()
    if project is not None and user.is_file() and user.resolve() == project.resolve():
        project = None  # the user's own file, found as the project's: trusted
    config = Config(layers, project)
    if project is not None:
        found = project
        layer = _collect(problems, lambda: read_config_file(found, "project file"), None)
        config.project_state = trust_state(project)
        if layer is not None:
            if config.project_state != "trusted":
                config.ignored = _untrusted(layer, project.parent.resolve())
            layers.append(layer)
    if user.is_file():
        layer = _collect(problems, lambda: read_config_file(user, "user file"), None)
        if layer is not None:
            layers.append(layer)
    if problems:
        raise ConfigurationError("\n".join(problems))
    return config


def _collect(problems: list[str], read: Callable[[], _Layer], instead: T) -> _Layer | T:
    """`read()`, its problems kept in `problems` (the next layer is read all the same)."""
    try:
        return read()
    except ConfigurationError as exc:
        problems.append(str(exc))
        return instead


def _untrusted(layer: _Layer, root: Path) -> list[Ignored]:
    """Take the settings that need trust out of an untrusted project file's layer."""
    ignored = []
    for (section, key), (value, origin) in list(layer.values.items()):
        reason = needs_trust(key, value, root)
        if reason is not None:
            del layer.values[(section, key)]
            ignored.append(Ignored(section, key, origin, reason))
    return ignored


def _env_layer(env: Mapping[str, str]) -> _Layer:
    layer = _Layer("environment")
    problems: dict[str, str] = {}
    for section, items in SECTIONS.items():
        for item in items:
            name = env_name(item.key)
            if name not in env:
                continue
            try:
                value = check_value(item, env[name], from_text=True)
            except BadValue as exc:
                problems.setdefault(name, f"environment variable {name}: {exc}")
                continue
            layer.values[(section, item.key)] = (value, name)
    if problems:
        raise ConfigurationError("\n".join(problems.values()))
    return layer


def read_config_file(path: Path, source: str) -> _Layer:
    """One config file, checked: every key known, every value of the right type."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise ConfigurationError(f"{path}: larger than {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    import tomllib  # imported when there is a file: most commands run where there is none

    try:
        data = tomllib.loads(text)
    except RecursionError:  # tomllib recurses per level of nested arrays and inline tables
        raise ConfigurationError(f"{path}: nested too deeply to be a loopwright.toml") from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        raise ConfigurationError(f"{where}: not valid TOML: {exc}") from None
    lines = _KeyLines(text)
    layer = _Layer(source)
    problems: list[tuple[int, str]] = []  # every one, in line order
    for name, value in data.items():
        if name in SECTIONS:
            if not isinstance(value, dict):
                at = lines.find("", name)
                problems.append((at, f"{path}:{at}: {name!r} must be a table ([{name}])"))
                continue
            for key, item_value in value.items():
                problems += _add(layer, path, lines, name, key, item_value)
        elif name in SHARED_KEYS:
            problems += _add(layer, path, lines, "", name, value)
        else:
            known = ", ".join([f"[{s}]" for s in SECTIONS] + list(SHARED_KEYS))
            at = lines.find("", name)
            problems.append((at, f"{path}:{at}: unknown key {name!r} (known: {known})"))
    if problems:
        raise ConfigurationError("\n".join(text for _, text in sorted(problems)))
    return layer


def _add(
    layer: _Layer, path: Path, lines: _KeyLines, section: str, key: str, value: Any
) -> list[tuple[int, str]]:
    """Take `key = value` into `layer`; the problem with it, if any (line, text)."""
    line = lines.find(section, key)
    where = f"{path}:{line}"
    sections = [section] if section else [s for s in SECTIONS if _has(s, key)]
    known = [item.key for item in SECTIONS[section]] if section else list(SHARED_KEYS)
    label = f"{section}.{key}" if section else key
    if key not in known:
        import difflib

        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        return [(line, f"{where}: unknown key {label!r} ({hint}known in "
                       f"{section or 'the top level'}: {', '.join(known)})")]  # fmt: skip
    for name in sections:
        try:
            converted = check_value(setting(name, key), value)
        except BadValue as exc:
            return [(line, f"{where}: {label}: {exc}")]
        layer.values[(section, key)] = (converted, where)
    return []


def _has(section: str, key: str) -> bool:
    return any(item.key == key for item in SECTIONS[section])


class _KeyLines:
    """The line of each key of a TOML text (tomllib gives none), by a plain scan."""

    _TABLE = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"'-]+)\s*\]")
    _KEY = re.compile(r"^\s*[\"']?([A-Za-z0-9_.-]+)[\"']?\s*=")

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[str, str], int] = {}
        table = ""
        for number, line in enumerate(text.splitlines(), start=1):
            header = self._TABLE.match(line)
            if header:
                table = header.group(1).strip("\"'")
                self.lines.setdefault(("", table), number)
                continue
            key = self._KEY.match(line)
            if key:
                self.lines.setdefault((table, key.group(1)), number)

    def find(self, section: str, key: str) -> int:
        return self.lines.get((section, key), 1)
