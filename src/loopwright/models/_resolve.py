"""Turn a model spec (`scripted:FILE`, `ollama:NAME`, `openai:NAME`, ...) into a Model."""

from __future__ import annotations

from collections.abc import Callable

from loopwright.errors import ConfigurationError
from loopwright.models._base import Model
from loopwright.models._scripted import ScriptedModel

ModelFactory = Callable[[str, str | None], Model]
"""(name after the prefix, base_url) -> Model"""


def _local(name: str, base_url: str | None) -> Model:
    from loopwright.models._local import local_model  # llama.cpp is imported only when used

    return local_model(name, base_url)


def _ollama(name: str, base_url: str | None) -> Model:
    from loopwright.models._ollama import ollama_model

    return ollama_model(name, base_url)


def _openai(name: str, base_url: str | None) -> Model:
    from loopwright.models._openai import openai_model

    return openai_model(name, base_url)


def _anthropic(name: str, base_url: str | None) -> Model:
    from loopwright.models._anthropic import anthropic_model

    return anthropic_model(name, base_url)


BUILT_IN: dict[str, ModelFactory] = {
    "scripted": lambda name, _base_url: ScriptedModel.from_file(name),
    "local": _local,
    "ollama": _ollama,
    "openai": _openai,
    "anthropic": _anthropic,
}


class ModelRegistry:
    """Turns model specs into Models. A Runtime is given one; tests and servers make their
    own (`with_factory`), so no global table is ever changed."""

    def __init__(self, factories: dict[str, ModelFactory] | None = None) -> None:
        self._factories = dict(BUILT_IN if factories is None else factories)

    def with_factory(self, prefix: str, factory: ModelFactory) -> ModelRegistry:
        """A copy that also knows `prefix:` specs."""
        registry = ModelRegistry({**self._factories, prefix: factory})
        return registry

    def prefixes(self) -> list[str]:
        return sorted(self._factories)

    def resolve(self, spec: str, *, base_url: str | None = None) -> Model:
        """A Model from a spec like `scripted:examples/echo.json` or `ollama:qwen3:8b`."""
        prefix, _, name = spec.partition(":")
        prefix, mark, options = prefix.partition("?")
        if mark:  # options straight after the provider: `local?threads=4`
            name = f"?{options}:{name}" if name else f"?{options}"
        if not prefix:
            raise ConfigurationError("empty model spec (try local, ollama:NAME, openai:NAME)")
        factory = self._factories.get(prefix)
        if factory is None:
            known = ", ".join(self.prefixes())
            raise ConfigurationError(
                f"unknown model provider {prefix!r} in {spec!r} (known: {known})"
            )
        if not name and prefix not in {"local"}:
            raise ConfigurationError(f"model spec {spec!r} needs a name after '{prefix}:'")
        return factory(name, base_url)


_DEFAULT = ModelRegistry()


def resolve_model(spec: str, *, base_url: str | None = None) -> Model:
    """A Model from a spec like `scripted:examples/echo.json` or `ollama:qwen3:8b`
    (the built-in providers; a Runtime may be given its own ModelRegistry)."""
    return _DEFAULT.resolve(spec, base_url=base_url)
