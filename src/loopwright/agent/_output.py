"""Structured output: the type a run's final answer must have, and how it is checked.

`AgentExecutor(..., output_type=T)` takes a pydantic model, a dataclass, a TypedDict (any
type pydantic's TypeAdapter accepts) or a JSON Schema dict. The model is asked for
`{"thought": ..., "final_answer": <value>}`; where the backend can constrain its output to
a schema (OpenAI-compatible `response_format`, Ollama `format`, the embedded model's
grammar) it gets that wrapper's schema in `ModelRequest.output_schema`. An answer that does
not validate goes back to the model with the errors; after `retries` more tries the run
fails with `OutputValidationError` holding the last answer (`AgentOptions.output_retries`).
"""

from __future__ import annotations

import copy
import json
import sys
import typing
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loopwright.errors import ConfigurationError

if TYPE_CHECKING:
    from loopwright.tools._jsonschema import SchemaError

MAX_ERRORS = 8
"""Validation errors shown to the model per answer (the first ones)."""


@dataclass(frozen=True)
class OutputCheck:
    """One answer checked: `value` when valid (`json_value` its JSON form), else `errors`."""

    value: Any = None
    json_value: Any = None
    errors: tuple[str, ...] = ()

    @property
    def valid(self) -> bool:
        return not self.errors


class OutputSpec:
    """The output type of a run: its JSON Schema, and a validator for answers."""

    def __init__(self, output_type: Any) -> None:
        self.output_type = output_type
        self._adapter: Any = None
        if isinstance(output_type, dict):
            from loopwright.tools._jsonschema import SchemaProblem, SchemaValidator

            try:  # bounded time whatever the schema and the answer (tools/_jsonschema.py)
                self._validator = SchemaValidator(output_type)
            except SchemaProblem as exc:
                raise ConfigurationError(f"output schema cannot be used: {exc}") from None
            self.schema: dict[str, Any] = copy.deepcopy(output_type)
        else:
            from pydantic import TypeAdapter
            from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

            try:
                self._adapter = TypeAdapter(_pydantic_ready(output_type))
                self.schema = self._adapter.json_schema()
            except (PydanticSchemaGenerationError, PydanticUserError, TypeError) as exc:
                raise ConfigurationError(
                    f"output_type {output_type!r} cannot be validated: use a pydantic model, "
                    f"a dataclass, a TypedDict or a JSON Schema dict ({exc})"
                ) from None

    @property
    def name(self) -> str:
        if isinstance(self.output_type, dict):
            return str(self.output_type.get("title") or "output")
        return str(getattr(self.output_type, "__name__", "output"))

    def reply_schema(self, tool_names: Sequence[str] = ()) -> dict[str, Any]:
        """The schema of a whole reply: the final answer wrapper, or (with tools) a call."""
        value = copy.deepcopy(self.schema)
        defs = value.pop("$defs", None)
        final: dict[str, Any] = {
            "type": "object",
            "properties": {"thought": {"type": "string"}, "final_answer": value},
            "required": ["thought", "final_answer"],
            "additionalProperties": False,
        }
        schema: dict[str, Any] = final
        if tool_names:
            call = {
                "type": "object",
                "properties": {
                    "thought": {"type": "string"},
                    "action": {"type": "string", "enum": list(tool_names)},
                    "action_input": {"type": "object"},
                },
                "required": ["thought", "action", "action_input"],
                "additionalProperties": False,
            }
            schema = {"anyOf": [call, final]}
        if defs:  # pydantic's references (#/$defs/Name) resolve from the root
            schema = {**schema, "$defs": defs}
        return schema

    def prompt_section(self, *, has_tools: bool = True) -> str:
        """What the system prompt says about the final answer."""
        schema = json.dumps(self.schema, ensure_ascii=False, separators=(",", ":"))
        direct = (
            ""
            if has_tools
            else "You have no tools: do not write an action; reply at once with the final "
            "answer, taken from the request.\n"
        )
        return (
            "FINAL ANSWER FORMAT:\n"
            f"{direct}"
            'Your final answer must be {"thought": "...", "final_answer": VALUE} where VALUE '
            "is a JSON value (not a string containing JSON) matching this JSON Schema:\n"
            f"{schema}"
        )

    def check(self, answer: str) -> OutputCheck:
        """Read the final answer as JSON and validate it."""
        try:
            data = json.loads(answer)
        except json.JSONDecodeError as exc:
            return OutputCheck(errors=(f"the final answer is not JSON ({exc.msg} at {exc.pos})",))
        if isinstance(data, dict) and set(data) <= {"final_answer", "thought"} and data:
            data = data.get("final_answer")  # the wrapper, given as the answer's text
        if self._adapter is None:
            errors = self._validator.errors(data, MAX_ERRORS)
            if errors:
                return OutputCheck(errors=tuple(_schema_error(e) for e in errors))
            return OutputCheck(data, data)
        from pydantic import ValidationError

        try:
            value = self._adapter.validate_python(data)
        except ValidationError as exc:
            return OutputCheck(errors=tuple(_pydantic_error(e) for e in exc.errors()[:MAX_ERRORS]))
        return OutputCheck(value, self._adapter.dump_python(value, mode="json"))

    def final_in(self, text: str) -> str | None:
        """The answer of a `{"final_answer": ...}` object anywhere in a reply (for agents
        without tools: a small model often writes invented actions before its answer)."""
        decoder = json.JSONDecoder()
        index = text.find("{")
        while index != -1:
            try:
                data, end = decoder.raw_decode(text, index)
            except json.JSONDecodeError:
                index = text.find("{", index + 1)
                continue
            if isinstance(data, dict) and "final_answer" in data:
                value = data["final_answer"]
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            index = text.find("{", end)
        return None

    def read(self, answer: str) -> Any:
        """The typed value of an answer this spec accepted (e.g. a stored run's answer)."""
        checked = self.check(answer)
        return checked.value if checked.valid else None

    def feedback(self, errors: Sequence[str]) -> str:
        """The message that sends an invalid answer back to the model."""
        lines = "\n".join(f"- {error}" for error in errors)
        return (
            "Your final answer does not match the required output schema:\n"
            f"{lines}\n"
            'Reply again with {"thought": "...", "final_answer": VALUE}, VALUE matching the '
            "schema given in FINAL ANSWER FORMAT."
        )


def _schema_error(error: SchemaError) -> str:
    where = "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in error.path)
    return f"final_answer{where}: {error.message}"


def _pydantic_error(error: Any) -> str:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.get("loc", ()))
    return f"final_answer{where}: {error.get('msg', 'invalid')}"


def _pydantic_ready(output_type: Any) -> Any:
    """typing.TypedDict before Python 3.12 lacks what pydantic needs: rebuild it with
    typing_extensions (same name, keys, types, required keys)."""
    if sys.version_info >= (3, 12) or not hasattr(output_type, "__required_keys__"):
        return output_type
    import typing_extensions as te

    if type(output_type).__module__ == "typing_extensions":
        return output_type
    hints = typing.get_type_hints(output_type)
    fields = {
        key: hint if key in output_type.__required_keys__ else te.NotRequired[hint]
        for key, hint in hints.items()
    }
    return te.TypedDict(output_type.__name__, fields)  # type: ignore[operator]


def as_output_spec(output_type: Any) -> OutputSpec | None:
    if output_type is None or isinstance(output_type, OutputSpec):
        return output_type
    return OutputSpec(output_type)
