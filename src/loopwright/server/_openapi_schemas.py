"""The API's component schemas (the shapes of its requests, runs, events and errors), for
the OpenAPI document (server/_openapi.py)."""

from __future__ import annotations

from typing import Any

from loopwright.server._validate import OPTION_TYPES

_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}


def ref(name: str) -> dict[str, str]:
    """A reference to the component schema `name`."""
    return {"$ref": f"#/components/schemas/{name}"}


_OPTIONS = {
    name: {"type": [_JSON_TYPES[t] for t in types] if len(types) > 1 else _JSON_TYPES[types[0]]}
    for name, types in OPTION_TYPES.items()
}

SCHEMAS: dict[str, Any] = {
    "GateDecisionEvent": {
        "type": "object",
        "required": ["run_id", "request_id", "approved"],
        "properties": {
            "run_id": {"type": "string"},
            "request_id": {"type": "string"},
            "approved": {"type": "boolean"},
            "delivered": {
                "const": "store",
                "description": "only in a 202: left in the store for the run's process",
            },
        },
    },
    "Error": {
        "type": "object",
        "properties": {
            "error": {
                "type": "object",
                "properties": {
                    "status": {"type": "integer"},
                    "message": {"type": "string"},
                    "field": {"type": "string", "description": "the field at fault"},
                },
                "required": ["status", "message"],
            }
        },
    },
    "AgentRunRequest": {
        "type": "object",
        "anyOf": [{"required": ["request"]}, {"required": ["prompt"]}],
        "additionalProperties": False,
        "properties": {
            "request": {"type": "string", "minLength": 1, "description": "what to do"},
            "prompt": {
                "type": "string",
                "minLength": 1,
                "deprecated": True,
                "description": "the older name of `request` (give one of them)",
            },
            "after": {
                "type": "string",
                "description": "a follow-up: the run of the turn before, an agent run of "
                "yours that has ended; without model and tools, its agent runs again",
            },
            "model": {"type": "string", "examples": ["local", "ollama:qwen3:8b"]},
            "base_url": {"type": "string"},
            "tools": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object", "properties": _OPTIONS, "additionalProperties": False},
        },
    },
    "TaskRunRequest": {
        "type": "object",
        "required": ["task"],
        "additionalProperties": False,
        "properties": {
            "task": {"type": "string", "description": "a task name offered by the server"},
            "inputs": {"type": "object"},
            "model": {"type": "string", "description": "for the task's agent steps"},
        },
    },
    "Run": {
        "type": "object",
        "properties": {
            "run_id": {"type": "string"},
            "kind": {"enum": ["agent", "task"]},
            "status": {"type": "string"},
            "request": {"type": "string"},
            "model": {"type": "string"},
            "input_tokens": {"type": "integer"},
            "output_tokens": {"type": "integer"},
            "cost": {"type": "number"},
            "answer": {"type": ["string", "null"]},
            "reason": {"type": ["string", "null"]},
            "last_seq": {"type": "integer"},
            "engine": {
                "enum": ["embedded", "temporal"],
                "description": "who executes the run (a queued run: accepted, not started)",
            },
            "live": {
                "type": "boolean",
                "description": "running in this server process, or on its engine's workers",
            },
            "waiting_for_approval": {
                "type": "boolean",
                "description": "running, and held at a gate until someone decides it",
            },
            "parent_run_id": {"type": ["string", "null"], "description": "a sub-agent's lead"},
            "pending_gates": {"type": "array", "items": ref("Gate")},
            "after_run_id": {"type": ["string", "null"], "description": "the turn before"},
            "turns": {
                "type": "array",
                "description": "the conversation the run is a turn of, oldest first (one "
                "run: it is none); each with run_id, request, status, answer",
                "items": {"type": "object"},
            },
            "fork_of": {
                "type": ["object", "null"],
                "description": "a fork: the run and step its first steps were taken from",
            },
            "steps": {"type": "integer", "description": "the steps (iterations) it took"},
        },
    },
    "Gate": {
        "type": "object",
        "properties": {
            "request_id": {"type": "string"},
            "step": {"type": "string"},
            "message": {"type": "string"},
            "seq": {"type": "integer"},
            "timeout_s": {"type": "number"},
        },
    },
    "Event": {
        "type": "object",
        "description": "one event as the events codec writes it (see docs/architecture.md)",
        "required": ["v", "type", "run_id", "seq", "ts"],
        "properties": {
            "v": {"type": "integer"},
            "type": {"type": "string"},
            "run_id": {"type": "string"},
            "seq": {"type": "integer"},
            "ts": {"type": "number"},
        },
        "additionalProperties": True,
    },
    "ModelCall": {
        "type": "object",
        "required": ["run_id", "seq", "duration_ms", "reply", "request", "request_problem"],
        "properties": {
            "run_id": {"type": "string"},
            "seq": {"type": "integer", "description": "the seq of its model_response event"},
            "iteration_number": {"type": "integer"},
            "duration_ms": {"type": "number", "description": "the call's latency"},
            "reply": {"type": "object", "description": "text, tool_calls, usage, model, ..."},
            "request_digest": {"type": "string"},
            "request": {
                "type": ["object", "null"],
                "description": "the request sent (messages, tools, settings), rebuilt from "
                "the log and matching its recorded fingerprint; null when it cannot be",
                "properties": {
                    "messages": {"type": "array", "items": {"type": "object"}},
                    "tools": {"type": "array", "items": {"type": "string"}},
                },
            },
            "request_problem": {"type": ["string", "null"], "description": "why not"},
        },
    },
    "EventPage": {
        "type": "object",
        "properties": {
            "run_id": {"type": "string"},
            "events": {"type": "array", "items": ref("Event")},
            "last_seq": {"type": "integer"},
            "more": {"type": "boolean", "description": "ask again with after=the last seq"},
            "status": {"type": "string"},
        },
    },
    "GateDecisionRequest": {
        "type": "object",
        "required": ["approve"],
        "properties": {
            "approve": {"type": "boolean"},
            "reason": {"type": "string", "maxLength": 1000},
            "by": {
                "type": "string",
                "maxLength": 80,
                "description": "who decides; recorded as `NAME (api:TENANT)`",
            },
        },
    },
    "ForkRequest": {
        "type": "object",
        "required": ["at"],
        "additionalProperties": False,
        "properties": {
            "at": {
                "type": "integer",
                "minimum": 0,
                "description": "steps to keep (0 to the run's last)",
            },
            "request": {"type": "string", "minLength": 1},
            "model": {"type": "string"},
        },
    },
}
