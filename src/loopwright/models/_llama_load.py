"""Loading the embedded model: its cache folder, llama.cpp's CPU buffers, and the counter
put in place of the loaded model's `eval` (the prompt tokens evaluated, the end of the
prompt's evaluation)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from loopwright.errors import ConfigurationError
from loopwright.models._threads import core_watch, quiet_barriers

ADJUST_EVERY = 16
"""Generated tokens between two looks at the free cores (when the threads are not fixed)."""


def cache_folder() -> Path:
    return Path(
        os.environ.get("LOOPWRIGHT_MODEL_CACHE") or platformdirs.user_cache_dir("loopwright")
    )


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
    """Stands in for a Llama's `eval`: counts the prompt tokens llama.cpp evaluates, and
    marks the end of the prompt's evaluation.

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
        self.prompt_done_at: float | None = None
        self.on_prompt_done: Callable[[], None] = _nothing
        self.every_few: Callable[[], None] = _nothing
        """Called before every `ADJUST_EVERY`th token's evaluation."""

    def start(
        self,
        on_prompt_done: Callable[[], None] = lambda: None,
        every_few: Callable[[], None] = lambda: None,
    ) -> None:
        self.prompt_evaluated = None
        self.prompt_done_at = None
        self.calls = 0
        self.on_prompt_done = on_prompt_done
        self.every_few = every_few

    def __call__(self, tokens: Sequence[int]) -> None:
        first = self.prompt_evaluated is None
        if first:
            self.prompt_evaluated = len(tokens)
        elif self.calls % ADJUST_EVERY == 0:
            self.every_few()
        self.calls += 1
        self._evaluate(tokens)
        if first:
            self.prompt_done_at = time.monotonic()
            self.on_prompt_done()


def _nothing() -> None:
    """Nobody listens."""


def load_llama(path: Path, context: int) -> Any:
    quiet_barriers()  # before llama.cpp's OpenMP runtime loads
    try:
        from llama_cpp import Llama
    except ImportError:
        raise ConfigurationError(
            "the embedded model needs llama-cpp-python: pip install 'loopwright[local]'"
        ) from None
    threads = core_watch().cores
    with chosen_cpu_buffers():
        llm = Llama(
            str(path),
            n_ctx=context,
            n_threads=threads,  # set again for each call (models/_threads.py)
            n_threads_batch=threads,  # prompt evaluation; llama-cpp-python's
            verbose=False,  # default is every logical CPU, hyper-threads included
        )
    llm.eval = EvalCounter(llm.eval)  # type: ignore[method-assign]
    return llm
