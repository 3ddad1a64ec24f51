"""Read `loopwright.toml` files and the environment; resolve each setting with its source.

Precedence, highest first: a command-line flag, the environment (`LOOPWRIGHT_<KEY>`), the
project file (`loopwright.toml` in the current folder or the nearest parent that has one),
the user file (`loopwright.toml` in the user config folder), the built-in default. Inside one
file, a key of the command's section (`[run]`) beats the same key at the top of the file.

A project file is read only when it is a regular file owned by the user or root, and its
relative paths follow its own folder (config/_project.py). Its settings that pick code or
data or weaken a protection apply only once the user trusts the file (config/_trust.py,
config/_trust_rules.py); until then they are left out, in `ignored`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import platformdirs

from loopwright.config._project import (
    FILE_NAME,
    ProjectFile,
    anchor_paths,
    find_project_file,
    read_config_bytes,
    read_project_file,
)
from loopwright.config._schema import (
    SECTIONS,
    SHARED_KEYS,
    BadValue,
    check_value,
    env_name,
    setting,
)
from loopwright.config._trust import TrustState, trust_state
from loopwright.config._trust_rules import needs_trust
from loopwright.errors import ConfigurationError

T = TypeVar("T")
U = TypeVar("U")


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
    refused: str | None = None
    """Why the project file was not read at all (a link, another user's file), or None."""

    def project_line(
        self, section: str, keys: Collection[str] | None = None, given: Collection[str] = ()
    ) -> str | None:
        """One line saying which project file applies to this command, what it gives and
        what it leaves out; None when it gives this command nothing. `keys`: the settings
        the command takes (None: all of the section's); `given`: those its command line
        gave, which beat the file."""
        if self.project is None:
            return None
        if self.refused is not None:
            return f"loopwright: ignoring {self.project}: {self.refused}"
        unused = {i.key for i in SECTIONS[section] if keys is not None and i.key not in keys}
        skipped = unused | set(given)  # what the file could not give this command
        used = self.project_keys(section, skipped)
        left_out = [item for item in self.ignored if self._would_apply(section, item, skipped)]
        if not used and not left_out:
            return None
        state = {"trusted": "trusted", "changed": "changed since you trusted it"}
        line = (
            f"loopwright: using {self.project} "
            f"({state.get(self.project_state or '', 'not trusted')}): {', '.join(used) or 'none'}"
        )
        if left_out:
            names = ", ".join(f"{item.label} ({item.reason})" for item in left_out)
            line += f"; ignoring {names}; `loopwright config trust {self.project}` uses them"
        return line

    def _would_apply(self, section: str, item: Ignored, skipped: Collection[str]) -> bool:
        """Whether an ignored setting would have applied to this command: one it takes, no
        flag and no variable beats it (the environment's layer is first)."""
        if item.section not in (section, "") or not _has(section, item.key) or item.key in skipped:
            return False
        return (
            self.layers[0].source != "environment" or self.layers[0].get(section, item.key) is None
        )

    def project_keys(self, section: str, skipped: Collection[str] = ()) -> list[str]:
        """The settings of this section (but `skipped`) the project file gives (as `key`
        when from the top of the file, `section.key` from its table)."""
        layer = next((x for x in self.layers if x.source == "project file"), None)
        if layer is None:
            return []
        used = []
        for item in SECTIONS[section]:
            if item.key in skipped or self.resolve(section, item.key).source != "project file":
                continue
            own = (section, item.key) in layer.values
            used.append(f"{section}.{item.key}" if own else item.key)
        return used

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
    return find_project_file(start)


def load_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The environment, project and user layers. Every bad key or value of every layer is
    one ConfigurationError, a line each, naming the file (or variable), the line and the key."""
    env = os.environ if environ is None else environ
    problems: list[str] = []
    layers = [_collect(problems, lambda: _env_layer(env), _Layer("environment"))]
    user = user_config_file()
    mine, user_problems = None, list[str]()  # the user file's problems come last
    if user.is_file():
        mine = _collect(user_problems, lambda: read_config_file(user, "user file"), None)
    found = find_project_file((cwd or Path.cwd()).resolve())
    if found is not None and user.is_file() and user.resolve() == found.resolve():
        found = None  # the user's own file, found as the project's: trusted
    config = Config(layers, found)
    if found is not None:
        project = _collect(problems, lambda: read_project_file(found), None)
        if project is not None:
            _add_project(config, problems, project, mine)
    if mine is not None:
        layers.append(mine)
    problems += user_problems
    if problems:
        raise ConfigurationError("\n".join(problems))
    return config


def _add_project(
    config: Config, problems: list[str], project: ProjectFile, mine: _Layer | None
) -> None:
    """The project file's layer, its untrusted settings left out, into `config`."""
    if project.data is None:
        config.refused = project.refused
        return
    data, folder = project.data, project.folder
    layer = _collect(problems, lambda: _parse(data, project.path, "project file", folder), None)
    config.project_state = trust_state(project.path, data)
    if layer is None:
        return
    if config.project_state != "trusted":
        config.ignored = _untrusted(layer, folder, mine)
    config.layers.append(layer)


def _collect(problems: list[str], read: Callable[[], T], instead: U) -> T | U:
    """`read()`, its problems kept in `problems` (the next layer is read all the same)."""
    try:
        return read()
    except ConfigurationError as exc:
        problems.append(str(exc))
        return instead


def _untrusted(layer: _Layer, folder: Path, mine: _Layer | None) -> list[Ignored]:
    """Take the settings that need trust out of an untrusted project file's layer."""
    ignored = []
    for (section, key), (value, origin) in list(layer.values.items()):
        reason = _why_trust(section, key, value, folder, mine)
        if reason is not None:
            del layer.values[(section, key)]
            ignored.append(Ignored(section, key, origin, reason))
    return ignored


def _why_trust(section: str, key: str, value: Any, folder: Path, mine: _Layer | None) -> str | None:
    """Why `key = value` needs trust in any section it applies to (a top-level key: each
    section that has it), against the user's own value there."""
    for name in [section] if section else [s for s in SECTIONS if _has(s, key)]:

        def yours(other: str, name: str = name) -> Any:
            found = mine.get(name, other) if mine is not None else None
            if found is not None:
                return found[0]
            return setting(name, other).default if _has(name, other) else None

        reason = needs_trust(key, value, folder, yours)
        if reason is not None:
            return reason
    return None


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
    return _parse(read_config_bytes(path), path, source)


def _parse(data: bytes, path: Path, source: str, folder: Path | None = None) -> _Layer:
    """A config file's layer from its bytes; with `folder`, its relative paths anchored
    there (a project file's)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigurationError(f"{path}: cannot read the config file: {exc}") from None
    import tomllib  # imported when there is a file: most commands run where there is none

    try:
        parsed = tomllib.loads(text)
    except RecursionError:  # tomllib recurses per level of nested arrays and inline tables
        raise ConfigurationError(f"{path}: nested too deeply to be a loopwright.toml") from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        where = f"{path}:{found.group(1)}" if found else str(path)
        raise ConfigurationError(f"{where}: not valid TOML: {exc}") from None
    layer = _layer_of(parsed, text, path, source)
    if folder is not None:
        for place, (value, origin) in layer.values.items():
            layer.values[place] = (anchor_paths(place[1], value, folder), origin)
    return layer


def _layer_of(data: dict[str, Any], text: str, path: Path, source: str) -> _Layer:
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
