"""Every exception in errors.py survives a pickle round trip with its fields (a process
pool or a multiprocessing queue carries them between processes)."""

from __future__ import annotations

import inspect
import pickle
from typing import Any

import pytest

from loopwright import errors

CLASSES = sorted(
    (c for c in vars(errors).values() if inspect.isclass(c) and issubclass(c, BaseException)),
    key=lambda c: c.__name__,
)

SAMPLES: dict[type[BaseException], BaseException] = {
    errors.UnknownToolError: errors.UnknownToolError("grep", ["echo", "add"]),
    errors.SkillError: errors.SkillError("skills/x/SKILL.md", "no name", line=3),
    errors.SkillProblems: errors.SkillProblems(
        [errors.SkillError("a/SKILL.md", "no name", 1), errors.SkillError("a/SKILL.md", "bad", 4)]
    ),
    errors.TaskParseError: errors.TaskParseError("task.yaml", "steps is empty", line=7),
    errors.TaskProblems: errors.TaskProblems(
        [errors.TaskParseError("a.yaml", "no id", 2), errors.TaskParseError("b.yaml", "bad", None)]
    ),
    errors.RunNotFound: errors.RunNotFound("run-1", where="runs.db"),
    errors.ModelError: errors.ModelError("HTTP 500", provider="ollama", url="http://h/api"),
    errors.ModelUnavailableError: errors.ModelUnavailableError(
        "refused", provider="openai", url="http://127.0.0.1:9/v1"
    ),
    errors.ModelAdapterError: errors.ModelAdapterError(
        "the model custom:x raised KeyError: 'choices'", error_type="KeyError", provider="x"
    ),
    errors.MaxStepsExceeded: errors.MaxStepsExceeded(12),
    errors.OutputValidationError: errors.OutputValidationError(
        "never matched", answer="{}", errors=["'n' is required"]
    ),
    errors.ReplayDivergence: errors.ReplayDivergence(4, "tool_call add", "tool_call sub"),
    errors.RunSuspended: errors.RunSuspended("approve_0123456789ab", ("pending",)),
}


def sample(cls: type[BaseException]) -> BaseException:
    """The class's sample; a class with the plain exception constructor takes a message."""
    if cls in SAMPLES:
        return SAMPLES[cls]
    assert "__init__" not in vars(cls), f"{cls.__name__} has its own __init__: add a sample"
    return cls("what went wrong", "and where")


def described(value: Any) -> Any:
    """An exception as comparable data: its class, text, args and fields, nested ones too."""
    if isinstance(value, BaseException):
        fields = {k: described(v) for k, v in vars(value).items()}
        return (type(value), str(value), value.args, fields)
    if isinstance(value, list):
        return [described(v) for v in value]
    return value


def test_every_class_in_errors_is_covered() -> None:
    assert len(CLASSES) >= 29
    assert errors.LoopwrightError in CLASSES


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_pickle_round_trip_keeps_class_text_and_fields(cls: type[BaseException]) -> None:
    original = sample(cls)
    original.add_note("seen in a worker")
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        copy = pickle.loads(pickle.dumps(original, protocol=protocol))
        assert type(copy) is cls
        assert described(copy) == described(original)
        assert copy.__notes__ == ["seen in a worker"]
