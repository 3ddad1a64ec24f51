"""What each model backend needs, whether it has it, and whether its server answers.

Behind `loopwright models`. Keys are only ever reported as set or not set.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from loopwright._net import is_loopback_url
from loopwright.errors import ConfigurationError, ModelError, ModelUnavailableError
from loopwright.models._anthropic import ANTHROPIC_VERSION, anthropic_base_url
from loopwright.models._host_client import host_wanted
from loopwright.models._host_files import all_hosts, host_dir, is_held, read_json
from loopwright.models._http import HttpClient, Secret
from loopwright.models._local import PACKAGED_MODELS, PackagedModel, cache_folder
from loopwright.models._ollama import ollama_base_url
from loopwright.models._openai import openai_base_url


@dataclass
class BackendStatus:
    backend: str
    spec: str
    configured: bool
    detail: str
    url: str | None = None
    reachable: bool | None = None
    """None when not checked (in-process, or nothing configured to check with)."""
    reach_detail: str = ""
    models: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


PACKAGED_ROLES = {"default": "Qwen2.5-Coder 1.5B", "small": "0.5B: faster, less accurate"}
"""What each packaged model is, for the line that names it (`local:small`: what is that?)."""


def _packaged_state(model: PackagedModel) -> str:
    target = cache_folder() / "models" / f"{model.name}.gguf"
    marker = target.with_suffix(".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == model.sha256:
        return f"cached at {target}"
    parts = [model.module_pattern.format(i) for i in range(1, model.parts + 1)]
    missing = [p for p in parts if importlib.util.find_spec(p) is None]
    if not missing:
        return "part packages installed (assembled on first use)"
    return f"not installed ({model.pip_hint})"


def _packaged_line(key: str, model: PackagedModel, state: str) -> str:
    """`local:small (0.5B: faster, less accurate) not installed (pip install ...)`."""
    spec = "local" if key == "default" else f"local:{key}"
    return f"{spec} ({PACKAGED_ROLES.get(key, model.name)}) {state}"


def local_status() -> BackendStatus:
    try:
        llama = f"llama-cpp-python {importlib.metadata.version('llama-cpp-python')}"
    except importlib.metadata.PackageNotFoundError:
        llama = ""
    states = {key: _packaged_state(model) for key, model in PACKAGED_MODELS.items()}
    usable = [key for key, state in states.items() if not state.startswith("not installed")]
    detail = "; ".join(
        [
            llama or "llama-cpp-python not installed",
            *(_packaged_line(k, PACKAGED_MODELS[k], s) for k, s in states.items()),
        ]
    )
    if not (llama and usable):
        detail += "; pip install 'loopwright[local]'"
    return BackendStatus(
        "local", "local", bool(llama and usable), detail, reach_detail=_host_detail()
    )


def _host_detail() -> str:
    """Where the embedded model runs: the user's model host (running or not), or each
    process (LOOPWRIGHT_MODEL_HOST=off)."""
    if not host_wanted():
        return "in each process (LOOPWRIGHT_MODEL_HOST=off)"
    try:
        folder = host_dir()
    except (OSError, ConfigurationError) as exc:
        return f"model host: {exc}"
    living = [read_json(h.info).get("pid") for h in all_hosts(folder) if is_held(h.lock)]
    if living:
        return f"model host running (pid {', '.join(str(p) for p in living)})"
    return "model host: starts with the first run that needs it"


async def _probe(status: BackendStatus, client: HttpClient, path: str, timeout: float) -> None:
    try:
        data = await client.get_json(path, timeout=timeout)
    except ModelError as exc:  # an HTTP error status still means the server is there
        status.reachable = not isinstance(exc, ModelUnavailableError)
        status.reach_detail = str(exc)
        return
    finally:
        await client.aclose()
    status.reachable = True
    listed = (data.get("models") or data.get("data")) if isinstance(data, dict) else None
    names = [m.get("name") or m.get("id") for m in listed or () if isinstance(m, dict)]
    status.models = [str(n) for n in names if n]
    status.reach_detail = f"{len(status.models)} models"


async def backend_statuses(
    *,
    urls: dict[str, str | None] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float = 2.0,
) -> list[BackendStatus]:
    """Every backend, configured or not; servers are asked once each, with a short timeout."""
    urls = urls or {}
    ollama_url = ollama_base_url(urls.get("ollama"))
    openai_url = openai_base_url(urls.get("openai"))
    anthropic_url = anthropic_base_url(urls.get("anthropic"))
    openai_key = os.environ.get("OPENAI_API_KEY", "")
    anthropic_key = os.environ.get("ANTHROPIC_API_KEY", "")
    statuses = [local_status()]
    probes = []

    ollama = BackendStatus("ollama", "ollama:NAME", True, "no key needed", ollama_url)
    hint = "is Ollama running? try `ollama serve`"
    client = HttpClient("ollama", ollama_url, hint=hint, transport=transport)
    probes.append(_probe(ollama, client, "/api/tags", timeout))
    statuses.append(ollama)

    openai_ok = bool(openai_key) or is_loopback_url(openai_url)
    detail = (
        "OPENAI_API_KEY set"
        if openai_key
        else "OPENAI_API_KEY not set (a server on this machine needs none: OPENAI_BASE_URL)"
    )
    openai = BackendStatus("openai", "openai:NAME", openai_ok, detail, openai_url)
    if openai_ok:
        headers = {"Authorization": f"Bearer {openai_key}"} if openai_key else {}
        secrets = (Secret(openai_key),)
        client = HttpClient(
            "openai", openai_url, headers=headers, secrets=secrets, transport=transport
        )
        probes.append(_probe(openai, client, "/models", timeout))
    statuses.append(openai)

    detail = "ANTHROPIC_API_KEY set" if anthropic_key else "ANTHROPIC_API_KEY not set"
    anthropic = BackendStatus(
        "anthropic", "anthropic:NAME", bool(anthropic_key), detail, anthropic_url
    )
    if anthropic_key:
        headers = {"x-api-key": anthropic_key, "anthropic-version": ANTHROPIC_VERSION}
        secrets = (Secret(anthropic_key),)
        client = HttpClient(
            "anthropic", anthropic_url, headers=headers, secrets=secrets, transport=transport
        )
        probes.append(_probe(anthropic, client, "/v1/models", timeout))
    statuses.append(anthropic)

    statuses.append(SCRIPTED)
    await asyncio.gather(*probes)
    return statuses


SCRIPTED = BackendStatus(
    "scripted",
    "scripted:FILE.json",
    True,
    "no model: replays a JSON list of replies, for tests, examples and demos",
)
