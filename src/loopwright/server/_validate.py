"""Request bodies checked field by field: bad input is a 4xx that names the field."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loopwright.agent import AgentOptions
from loopwright.errors import ConfigurationError
from loopwright.runtime import RunSpec
from loopwright.server._config import ServerConfig
from loopwright.server._http import ApiError

SPEC_FIELDS = frozenset({"model", "tools", "options", "base_url", "approve", "output_schema"})
"""What a request may say about the agent (besides its text and the run it follows)."""
AGENT_FIELDS = SPEC_FIELDS | {"request", "prompt", "after"}
TASK_FIELDS = frozenset({"task", "inputs", "model"})

# Options a request may set, with the JSON types each accepts.
OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "max_iterations": (int,),
    "output_retries": (int,),
    "approval_timeout_s": (int, float),
    "tier": (str,),
    "tool_mode": (str,),
    "parse_retries": (int,),
    "temperature": (int, float),
    "max_output_tokens": (int,),
    "timeout_s": (int, float),
    "iteration_timeout_s": (int, float),
    "tool_timeout_s": (int, float),
    "max_tokens_total": (int,),
    "max_cost": (int, float),
    "repetition_threshold": (int,),
    "last_turn": (bool,),
    "no_progress_limit": (int,),
    "progress_signal": (str,),
    "context_window": (int,),
}


@dataclass(frozen=True)
class AgentRequest:
    """An agent run: its spec (from the body's fields, or the server's defaults), the run it
    follows up (`after`), and whether the body said anything about the agent itself."""

    spec: RunSpec
    names_agent: bool


@dataclass(frozen=True)
class TaskRequest:
    task: str
    inputs: dict[str, Any]
    model: str | None = None


def parse_run_request(body: dict[str, Any], config: ServerConfig) -> AgentRequest | TaskRequest:
    """An agent run (`request`, or its older name `prompt`; `model`, `tools`, `options`;
    `after`: the run it follows up) or a task run (`task`, `inputs`)."""
    if "request" in body and "prompt" in body:
        raise ApiError(422, "give 'request' or its older name 'prompt', not both", field="prompt")
    has_prompt, has_task = "request" in body or "prompt" in body, "task" in body
    if has_prompt == has_task:
        raise ApiError(422, "give either 'request' (an agent run) or 'task' (a task run)")
    allowed = AGENT_FIELDS if has_prompt else TASK_FIELDS
    for name in body:
        if name not in allowed:
            kind = "an agent run" if has_prompt else "a task run"
            raise ApiError(422, f"unknown field for {kind}", field=name)
    if has_task:
        return _task_request(body, config)
    return AgentRequest(_agent_spec(body, config), names_agent=bool(SPEC_FIELDS & set(body)))


def check_model(spec: Any, config: ServerConfig, *, field: str = "model") -> str:
    """`spec` if this server offers it (`serve --allow-model`), else a 422 listing what is
    offered. The answer is the same whether or not a named file exists: nothing a client
    names is opened unless the operator allowed it. The server's task launcher calls it
    too for a model that reaches it another way."""
    if not isinstance(spec, str) or not spec.strip():
        raise ApiError(422, "must be a model spec string like 'ollama:qwen3:8b'", field=field)
    name: str = spec.strip()
    if not config.model_allowed(name):
        offered = ", ".join(config.offered_models())
        raise ApiError(422, f"not offered by this server (offered: {offered})", field=field)
    return name


def _task_request(body: dict[str, Any], config: ServerConfig) -> TaskRequest:
    task = body["task"]
    if not isinstance(task, str) or not task.strip():
        raise ApiError(422, "must be a non-empty string", field="task")
    inputs = body.get("inputs", {})
    if not isinstance(inputs, dict):
        raise ApiError(422, "must be an object", field="inputs")
    model = body.get("model")
    if model is not None:
        model = check_model(model, config)
    return TaskRequest(task.strip(), inputs, model)


def request_text(body: dict[str, Any], name: str) -> str:
    """The body's `name` (a run's request): a non-empty string, or a 422 naming it."""
    text = body[name]
    if not isinstance(text, str) or not text.strip():
        raise ApiError(422, "must be a non-empty string", field=name)
    return text


def run_id_field(body: dict[str, Any], name: str) -> str | None:
    """The body's `name` (a run id, optional): a non-empty string, or a 422 naming it."""
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise ApiError(422, "must be a run id (a non-empty string)", field=name)
    return value.strip()


def _agent_spec(body: dict[str, Any], config: ServerConfig) -> RunSpec:
    prompt = request_text(body, "request" if "request" in body else "prompt")
    model = check_model(body.get("model") or config.default_model, config)
    base_url = body.get("base_url")
    if base_url is not None and not isinstance(base_url, str):
        raise ApiError(422, "must be a string", field="base_url")
    if base_url is not None and not config.allow_base_url:
        raise ApiError(
            422, "this server does not take a base_url (--allow-base-url)", field="base_url"
        )
    return RunSpec(
        request=prompt,
        model=model,
        base_url=base_url,
        tools=_tools(body.get("tools", []), config),
        workspace=config.workspace,
        options=_options(body.get("options", {})),
        approve=_approve(body.get("approve", [])),
        output_schema=_output_schema(body.get("output_schema")),
        after=run_id_field(body, "after"),
    )


def _approve(value: Any) -> tuple[str, ...]:
    """Tool names or effects whose calls wait for approval (checked against the tools)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ApiError(422, "must be a list of tool names or effects", field="approve")
    return tuple(value)


def _output_schema(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ApiError(422, "must be a JSON Schema object", field="output_schema")
    from loopwright.agent._output import OutputSpec

    try:
        OutputSpec(value)
    except ConfigurationError as exc:
        raise ApiError(422, str(exc), field="output_schema") from None
    return value


def _tools(value: Any, config: ServerConfig) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ApiError(422, "must be a list of tool names", field="tools")
    offered = ", ".join(sorted(config.allowed_tools)) or "none"
    for index, name in enumerate(value):
        if not isinstance(name, str):
            raise ApiError(422, "must be a string", field=f"tools[{index}]")
        if name not in config.allowed_tools:
            raise ApiError(
                422,
                f"tool {name!r} is not offered by this server (offered: {offered})",
                field=f"tools[{index}]",
            )
    return tuple(value)


def _options(value: Any) -> AgentOptions:
    if not isinstance(value, dict):
        raise ApiError(422, "must be an object", field="options")
    for name, item in value.items():
        types = OPTION_TYPES.get(name)
        if types is None:
            known = ", ".join(sorted(OPTION_TYPES))
            raise ApiError(422, f"unknown option (known: {known})", field=f"options.{name}")
        wrong_bool = isinstance(item, bool) and bool not in types  # a bool is an int
        if item is not None and (wrong_bool or not isinstance(item, types)):
            expected = " or ".join(t.__name__ for t in types)
            raise ApiError(422, f"must be {expected}", field=f"options.{name}")
    given = {k: v for k, v in value.items() if v is not None or OPTION_TYPES[k] != (bool,)}
    try:
        return AgentOptions.from_dict(given)
    except ConfigurationError as exc:
        raise ApiError(422, str(exc), field="options") from None


def parse_gate_decision(body: dict[str, Any]) -> bool:
    for name in body:
        if name != "approve":
            raise ApiError(422, "unknown field (expected only 'approve')", field=name)
    approve = body.get("approve")
    if not isinstance(approve, bool):
        raise ApiError(422, "required, true or false", field="approve")
    return approve
