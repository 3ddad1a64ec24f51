"""The embedded model's system prompt, evaluated once and kept on disk across processes.

Every run with the same tools and instructions starts with the same system message: about
500 tokens for the README's command, 12-14 s of prompt evaluation on 2 cores, paid again
by each new process (each `loopwright run`). Within a process llama-cpp-python already
reuses the KV cache's longest shared prefix; this module keeps the system message's part
of that cache in a file, so the next process loads it (a few milliseconds) instead of
evaluating it.

- **What is stored**: llama.cpp's state of sequence 0 holding exactly the prompt's tokens up
  to the end of the system message, in `<cache>/prompts/<key>.kv`. The key is a sha256
  over the format version, the model file (path, size, mtime), the context size,
  llama-cpp-python's version and the tokens; the file repeats the tokens' sha256 and the
  state's, and is used only when both match and llama.cpp accepts the state. A file that
  does not (damaged, cut short, written for other tokens) is deleted and the prefix
  evaluated again.
- **Where**: `LOOPWRIGHT_PROMPT_CACHE` names the folder; `0` (or `off`) turns the cache
  off; unset, `prompts/` in the model cache folder (LOOPWRIGHT_MODEL_CACHE or the user's
  cache). The folder is made private (0700) and each file 0600: the state encodes the
  system message, which may hold a skill's instructions.
- **Size**: about 28 KB a token for the 1.5B model (14 MB for the README's prompt); the
  `KEEP` most recently used files are kept, older ones deleted.

Only models whose GGUF carries a chat template (the packaged ones do) take this path: the
prompt is rendered with that template exactly as llama-cpp-python's chat completion
renders it.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

FORMAT = b"loopwright-prefix-v1"
MAGIC = b"LWKV1\n"
KEEP = 8
"""Prefix files kept; the least recently used beyond this are deleted."""
MIN_TOKENS = 64
"""Shorter system messages take under 2 s to evaluate: not worth a file."""


def prefix_folder(model_cache: Path) -> Path | None:
    """The folder of prefix files, or None when the user turned the cache off."""
    setting = os.environ.get("LOOPWRIGHT_PROMPT_CACHE", "").strip()
    if setting.lower() in {"0", "off", "false", "no"}:
        return None
    return Path(setting) if setting else model_cache / "prompts"


def system_prefix(llm: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The prompt's tokens up to the end of its system message, as llama-cpp-python's chat
    completion will tokenize the prompt; empty when there is none worth keeping."""
    if not messages or messages[0].get("role") != "system":
        return []
    if llm.chat_handler is not None or llm.chat_format != "chat_template.default":
        return []  # not rendered by the GGUF's own template: the tokens are not known here
    formatter = _formatter(llm)
    whole = _tokens(llm, formatter(messages=list(messages)))
    alone = _tokens(llm, formatter(messages=[messages[0]]))
    same = int(llm.longest_token_prefix(whole, alone))
    return whole[:same] if same >= MIN_TOKENS else []


def prompt_tokens(llm: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """The prompt's tokens as llama-cpp-python's chat completion will make them; empty when
    they cannot be known here (a model without its own chat template)."""
    if llm.chat_handler is not None or llm.chat_format != "chat_template.default":
        return []
    return _tokens(llm, _formatter(llm)(messages=list(messages)))


def _formatter(llm: Any) -> Any:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    return Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=_token_text(llm, llm.token_eos()),
        bos_token=_token_text(llm, llm.token_bos()),
    )


def _token_text(llm: Any, token: int) -> str:
    return str(llm._model.token_get_text(token)) if token != -1 else ""


def _tokens(llm: Any, rendered: Any) -> list[int]:
    text = str(rendered.prompt).encode("utf-8")
    return list(llm.tokenize(text, add_bos=not rendered.added_special, special=True))


def cached_length(llm: Any, tokens: Sequence[int]) -> int:
    """How many of `tokens` the KV cache holds now, from the start."""
    return int(llm.longest_token_prefix(llm.input_ids[: llm.n_tokens], tokens))


def prime(llm: Any, prefix: Sequence[int], folder: Path, model_path: Path) -> int:
    """Put `prefix` in the KV cache: already there, from its file, or evaluated (and then
    saved). Returns the tokens evaluated."""
    held = cached_length(llm, prefix)
    if held == len(prefix):
        return 0
    file = folder / f"{_key(llm, prefix, model_path)}.kv"
    if _load(llm, prefix, file):
        return 0
    llm._ctx.kv_cache_seq_rm(-1, held, -1)
    llm.n_tokens = held
    llm.eval(list(prefix[held:]))
    _save(llm, prefix, file)
    return len(prefix) - held


def _key(llm: Any, prefix: Sequence[int], model_path: Path) -> str:
    import llama_cpp

    stat = model_path.stat()
    digest = hashlib.sha256(FORMAT)
    for part in (model_path.resolve(), stat.st_size, stat.st_mtime_ns, llm.n_ctx()):
        digest.update(f"{part}\0".encode())
    digest.update(f"{llama_cpp.__version__}\0".encode())
    digest.update(_token_bytes(prefix))
    return digest.hexdigest()[:40]


def _token_bytes(tokens: Sequence[int]) -> bytes:
    return b"".join(int(t).to_bytes(4, "little") for t in tokens)


def _sha(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def restore_state(llm: Any, tokens: Sequence[int], state: bytes) -> bool:
    """Put `state` (llama.cpp's state of sequence 0, holding exactly `tokens`) in the KV
    cache; False, and the cache emptied, when llama.cpp does not take it."""
    import llama_cpp

    llm._ctx.kv_cache_seq_rm(-1, 0, -1)
    llm.n_tokens = 0
    read = 0
    if state:
        buffer = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        read = llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, buffer, len(state), 0)
    if read != len(state) or not state:
        llm._ctx.kv_cache_seq_rm(-1, 0, -1)
        return False
    llm.input_ids[: len(tokens)] = tokens
    llm.n_tokens = len(tokens)
    llm._requires_eval = True  # the logits are not those of the last token
    return True


def saved_state(llm: Any) -> bytes | None:
    """llama.cpp's state of sequence 0 (the KV cache of `llm.input_ids[:llm.n_tokens]`)."""
    import llama_cpp

    size = llama_cpp.llama_state_seq_get_size(llm._ctx.ctx, 0)
    buffer = (ctypes.c_uint8 * size)()
    written = llama_cpp.llama_state_seq_get_data(llm._ctx.ctx, buffer, size, 0)
    return bytes(buffer) if written == size else None


def _load(llm: Any, prefix: Sequence[int], file: Path) -> bool:
    """Fill the KV cache from `file`; False (and the file deleted) when it does not fit."""
    try:
        data = file.read_bytes()
    except OSError:
        return False
    header = MAGIC + hashlib.sha256(_token_bytes(prefix)).digest()
    start = len(header) + 32  # then the state's own sha256, then the state
    state = data[start:]
    fits = data.startswith(header) and data[len(header) : start] == _sha(state)
    if not restore_state(llm, prefix, state if fits else b""):
        with contextlib.suppress(OSError):
            file.unlink()
        return False
    with contextlib.suppress(OSError):
        os.utime(file)  # recently used: kept by `_trim`
    return True


def _save(llm: Any, prefix: Sequence[int], file: Path) -> None:
    """Write the KV cache (exactly `prefix`) to `file`; a failure only costs the next
    process the evaluation."""
    state = saved_state(llm)
    if state is None:
        return
    header = MAGIC + hashlib.sha256(_token_bytes(prefix)).digest() + _sha(state)
    try:
        file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=file.parent, suffix=".part")  # mode 0600
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(header)
            out.write(state)
        os.replace(temporary, file)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        return
    _trim(file.parent)


def _trim(folder: Path) -> None:
    files = sorted(folder.glob("*.kv"), key=_mtime, reverse=True)
    for old in files[KEEP:]:
        with contextlib.suppress(OSError):
            old.unlink()


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0
