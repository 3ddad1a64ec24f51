"""The embedded model's system prompt kept on disk across processes (models/_prefix_cache).

The folder setting and the clean-up need no model; the cache itself is shown on the real
embedded model: a second process's first call loads the system message instead of
evaluating it and replies the same, and a damaged file is never used."""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

import pytest

from loopwright.messages import Message, ModelRequest, ModelResponse
from loopwright.models._local import LocalModel, _load
from loopwright.models._prefix_cache import KEEP, _trim, prefix_folder
from model_server import model_threads, packaged_model

SYSTEM = (
    "You are a careful assistant for arithmetic. You answer with one number and nothing "
    "else: no words, no units, no punctuation. When a question has several operations, "
    "work them out in the usual order (brackets first, then multiplication and division, "
    "then addition and subtraction) and give only the final number. Examples of answers: "
    "12, 7, 1048576, 0. Never explain how you got the number."
)


def test_the_folder_follows_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("LOOPWRIGHT_PROMPT_CACHE", raising=False)
    assert prefix_folder(tmp_path) == tmp_path / "prompts"
    monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", str(tmp_path / "elsewhere"))
    assert prefix_folder(tmp_path) == tmp_path / "elsewhere"
    for off in ("0", "off", "OFF", "false", "no"):
        monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", off)
        assert prefix_folder(tmp_path) is None, off


def test_only_the_most_recently_used_files_are_kept(tmp_path: Path) -> None:
    for age in range(KEEP + 3):
        file = tmp_path / f"{age}.kv"
        file.write_bytes(b"x")
        os.utime(file, (1_000_000 - age, 1_000_000 - age))  # 0 is the newest
    (tmp_path / "other.txt").write_text("not a prefix file")
    _trim(tmp_path)
    kept = sorted(int(p.stem) for p in tmp_path.glob("*.kv"))
    assert kept == list(range(KEEP))
    assert (tmp_path / "other.txt").exists()


def ask(model: LocalModel) -> ModelResponse:
    request = ModelRequest(
        messages=(Message.system(SYSTEM), Message.user("What is 6 * 7?")),
        temperature=0.0,
        max_output_tokens=4,
    )
    return asyncio.run(model.complete(request))


def as_in_a_new_process(model: LocalModel) -> None:
    """Empty the in-memory KV cache, as a new process starts with."""
    llm, lock = _load(model.path, model.threads, model.context)
    with lock:
        llm.reset()


@pytest.mark.model
def test_a_new_process_loads_the_system_message_and_replies_the_same(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "prompts"
    monkeypatch.setenv("LOOPWRIGHT_PROMPT_CACHE", str(folder))
    model = LocalModel(packaged_model(), threads=model_threads())
    as_in_a_new_process(model)
    cold = ask(model)
    assert cold.usage.cached_input_tokens == 0, cold.usage
    (file,) = folder.glob("*.kv")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    assert not list(folder.glob("*.part")), "no temporary file is left"

    as_in_a_new_process(model)
    warm = ask(model)
    assert warm.text == cold.text, (cold.text, warm.text)
    # the whole system message came from the file: only the question's turn is evaluated
    assert warm.usage.cached_input_tokens > 0.8 * warm.usage.input_tokens, warm.usage

    whole = file.read_bytes()
    file.write_bytes(whole[:-1000])  # cut short, as by a full disk
    as_in_a_new_process(model)
    damaged = ask(model)
    assert damaged.usage.cached_input_tokens == 0, ("a damaged file is not used", damaged.usage)
    assert damaged.text == cold.text
    assert file.read_bytes() == whole, "the file is written again whole"
