"""The embedded model's computation: a GGUF file loaded by llama.cpp, one call at a time.

The same code runs a call in the process that asked for it and in the model host
(models/_host_server.py): load once, wait for the user's turn (models/_turn.py), choose
the threads (models/_threads.py), bring the prompt's longest known prefix into the KV cache
(another client's kept state, the system message's file on disk), evaluate the rest of the
prompt, generate. Each phase is reported as it starts, and timed into the reply's
`timings`.
"""

from __future__ import annotations

import atexit
import collections
import dataclasses
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopwright.errors import ModelError
from loopwright.messages import ModelRequest, ModelResponse, ModelTimings, Usage
from loopwright.models._base import TextSink
from loopwright.models._llama_load import EvalCounter, cache_folder, load_llama
from loopwright.models._phase import Phase
from loopwright.models._prefix_cache import (
    prefix_folder,
    prime,
    prompt_tokens,
    restore_state,
    saved_state,
    system_prefix,
)
from loopwright.models._stop import StreamedText
from loopwright.models._threads import core_watch
from loopwright.models._turn import Abandoned, turn

DEFAULT_CONTEXT = 8192
KEPT_STATES = 4
"""Clients whose KV cache the host keeps while it serves another (about 28 KB a token)."""
MIN_GAIN = 32
"""A kept state is restored when it holds at least this many more of the prompt's tokens."""


@dataclass(frozen=True)
class CallRequest:
    """One call, as the embedded model needs it (and as it travels to the model host)."""

    messages: tuple[dict[str, str], ...]
    temperature: float = 0.0
    max_tokens: int = 512
    output_schema: dict[str, Any] | None = None
    stop_at_action: bool = False
    calls_in_a_row: bool = False
    """With `stop_at_action`: JSON calls one after the other stay whole."""
    threads: int | None = None
    """Fixed by the user; None: the cores free at the call."""
    streamed: bool = False
    """The reply's pieces are wanted as they are generated."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": list(self.messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "output_schema": self.output_schema,
            "stop_at_action": self.stop_at_action,
            "calls_in_a_row": self.calls_in_a_row,
            "threads": self.threads,
            "streamed": self.streamed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CallRequest:
        messages = tuple(
            {"role": str(m["role"]), "content": str(m["content"])} for m in data["messages"]
        )
        threads = data.get("threads")
        return cls(
            messages=messages,
            temperature=float(data.get("temperature") or 0.0),
            max_tokens=int(data.get("max_tokens") or 512),
            output_schema=data.get("output_schema"),
            stop_at_action=bool(data.get("stop_at_action")),
            calls_in_a_row=bool(data.get("calls_in_a_row")),
            threads=int(threads) if threads else None,
            streamed=bool(data.get("streamed")),
        )


@dataclass
class CallControl:
    """Who hears a call's phases and pieces, and whether its asker is still there."""

    on_phase: Callable[[Phase, str], None] = lambda phase, detail: None
    on_text: TextSink | None = None
    should_stop: Callable[[], bool] = lambda: False
    client: str = ""
    """The model host's client (its KV cache is kept while others are served); "" in a
    process that runs its own calls."""
    what: str = ""
    """Who computes, as the user's turn says it ("" : this process's command)."""


@dataclass
class _Kept:
    tokens: list[int]
    state: bytes


@dataclass
class LlamaEngine:
    """A GGUF file and its llama.cpp instance (loaded on first use), whose calls run one
    at a time."""

    path: Path
    context: int = DEFAULT_CONTEXT
    llm: Any = None
    call_lock: threading.Lock = field(default_factory=threading.Lock)
    _load_lock: threading.Lock = field(default_factory=threading.Lock)
    _owner: str = ""
    _kept: collections.OrderedDict[str, _Kept] = field(default_factory=collections.OrderedDict)

    @property
    def loaded(self) -> bool:
        return self.llm is not None

    def load(self) -> float:
        """Load the model if nobody has; the seconds this caller waited for it."""
        if self.llm is not None:
            return 0.0
        started = time.monotonic()
        with self._load_lock:
            if self.llm is None:
                self.llm = load_llama(self.path, self.context)
        return time.monotonic() - started

    def close(self) -> None:
        with self._load_lock:
            if self.llm is not None:
                self.llm.close()
                self.llm = None

    def complete(self, request: CallRequest, control: CallControl) -> ModelResponse:
        core_watch().begin()
        if self.llm is None:
            control.on_phase("loading", f"{self.path.name}")
        load_s = self.load()
        ready = time.monotonic()
        if not self.call_lock.acquire(blocking=False):
            control.on_phase("waiting", "another call in this process")
            self.call_lock.acquire()
        try:
            waiting = lambda who: control.on_phase("waiting", who)  # noqa: E731
            with turn(waiting, control.should_stop, control.what):
                wait_s = time.monotonic() - ready
                response = self._run(request, control)
        finally:
            self.call_lock.release()
        timings = response.timings or ModelTimings()
        timings = dataclasses.replace(timings, load_ms=load_s * 1000, wait_ms=wait_s * 1000)
        return dataclasses.replace(response, timings=timings)

    def _run(self, request: CallRequest, control: CallControl) -> ModelResponse:
        llm = self.llm
        threads = self._set_threads(request.threads)
        control.on_phase("prompt", f"{threads} thread{'s' if threads != 1 else ''}")
        began = time.monotonic()
        counter: EvalCounter = llm.eval  # installed by load_llama
        messages = list(request.messages)
        try:
            self._bring_prefix(control.client, messages)
            primed = self._prime(messages)
            counter.start(
                on_prompt_done=lambda: control.on_phase("generating", ""),
                every_few=lambda: self._adjust_threads(request.threads),
            )
            arguments: dict[str, Any] = {
                "messages": messages,
                "temperature": request.temperature,
                "max_tokens": request.max_tokens,
                "seed": 0,
                "response_format": _response_format(request.output_schema),
            }
            if not request.streamed and not request.stop_at_action:
                reply = llm.create_chat_completion(**arguments)
            else:  # streamed in this thread: a stop at the action ends generation
                asked = ModelRequest(
                    messages=(),
                    stop_at_action=request.stop_at_action,
                    calls_in_a_row=request.calls_in_a_row,
                )
                text = StreamedText(asked, control.on_text or _unheard)
                reply = _streamed(llm, arguments, text, counter, control.should_stop)
        except ValueError as exc:  # e.g. the prompt is longer than the context window
            raise ModelError(f"local model {self.path.name}: {exc}", provider="local") from None
        ended = time.monotonic()
        prompt_end = counter.prompt_done_at or ended
        timings = ModelTimings(
            prompt_ms=(prompt_end - began) * 1000,
            generate_ms=(ended - prompt_end) * 1000,
            threads=threads,
        )
        return _response(reply, primed + (counter.prompt_evaluated or 0), timings)

    def _set_threads(self, fixed: int | None) -> int:
        import llama_cpp

        threads = fixed or core_watch().threads()
        llama_cpp.llama_set_n_threads(self.llm._ctx.ctx, threads, threads)
        return threads

    def _adjust_threads(self, fixed: int | None) -> None:
        """Between generated tokens: follow the free cores (the answer does not change)."""
        if fixed is None:
            self._set_threads(None)

    def _prime(self, messages: list[dict[str, str]]) -> int:
        """The system message from the KV cache or its file on disk (docs/models.md);
        the tokens evaluated to get it there."""
        folder = prefix_folder(cache_folder())
        prefix = system_prefix(self.llm, messages) if folder is not None else []
        return prime(self.llm, prefix, folder, self.path) if folder and prefix else 0

    def _bring_prefix(self, client: str, messages: list[dict[str, str]]) -> None:
        """In the model host: keep the KV cache of the client served last, and bring in
        the kept state that holds most of this prompt (when it beats what is there)."""
        if not client:
            return
        llm = self.llm
        if self._owner and self._owner != client and llm.n_tokens:
            state = saved_state(llm)
            if state is not None:
                self._kept[self._owner] = _Kept(list(llm.input_ids[: llm.n_tokens]), state)
                self._kept.move_to_end(self._owner)
                while len(self._kept) > KEPT_STATES:
                    self._kept.popitem(last=False)
        self._owner = client
        tokens = prompt_tokens(llm, messages)
        if not tokens or not self._kept:
            return
        held = int(llm.longest_token_prefix(list(llm.input_ids[: llm.n_tokens]), tokens))
        name, best = max(
            self._kept.items(), key=lambda item: llm.longest_token_prefix(item[1].tokens, tokens)
        )
        if llm.longest_token_prefix(best.tokens, tokens) >= held + MIN_GAIN:
            restore_state(llm, best.tokens, best.state)
            self._kept.move_to_end(name)


def _response_format(schema: dict[str, Any] | None) -> Any:
    """A structured-output schema becomes a llama.cpp grammar (llama-cpp-python builds it)."""
    if schema is not None:
        return {"type": "json_object", "schema": schema}
    return None


def _response(reply: dict[str, Any], evaluated: int, timings: ModelTimings) -> ModelResponse:
    usage = reply.get("usage") or {}
    prompt_tokens_ = int(usage.get("prompt_tokens", 0))
    cached = max(0, prompt_tokens_ - evaluated)
    choice = reply["choices"][0]
    return ModelResponse(
        text=choice["message"].get("content") or "",
        usage=Usage(prompt_tokens_, int(usage.get("completion_tokens", 0)), cached),
        finish_reason=choice.get("finish_reason"),
        timings=timings,
    )


def _unheard(piece: str) -> None:
    """Nobody listens to the pieces of a reply streamed to stop at its action."""


def _streamed(
    llm: Any,
    arguments: dict[str, Any],
    text: StreamedText,
    counter: EvalCounter,
    should_stop: Callable[[], bool],
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
            if should_stop():
                raise Abandoned
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


_ENGINES: dict[str, LlamaEngine] = {}
_GUARD = threading.Lock()


def engine_for(path: Path, context: int = DEFAULT_CONTEXT) -> LlamaEngine:
    """This process's one engine for a model file and context (shared by its runs)."""
    key = f"{path}:{context}"
    with _GUARD:
        engine = _ENGINES.get(key)
        if engine is None:
            engine = _ENGINES[key] = LlamaEngine(path, context)
        return engine


def _close_engines() -> None:
    """Free the models before interpreter teardown (llama.cpp's own finalizer fails once
    the module globals it needs are gone, printing an ignored exception)."""
    with _GUARD:
        for engine in _ENGINES.values():
            engine.close()
        _ENGINES.clear()


atexit.register(_close_engines)
