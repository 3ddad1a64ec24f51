"""The API's OpenAPI 3.1 schema, written by hand (served at /api/openapi.json)."""

from __future__ import annotations

from typing import Any

from loopwright.server._validate import OPTION_TYPES

_JSON_TYPES = {int: "integer", float: "number", str: "string", bool: "boolean"}


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        401: "missing or unknown token",
        404: "no such run for this tenant",
        409: "the run is not in a state that allows this",
        422: "a field is invalid; `error.field` names it",
    }
    return {str(code): _json(_ref("Error"), text[code]) for code in codes}


RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}
AFTER = {
    "name": "after",
    "in": "query",
    "description": "only events with a larger seq",
    "schema": {"type": "integer", "minimum": 0, "default": 0},
}

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
            "pending_gates": {"type": "array", "items": _ref("Gate")},
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
            "events": {"type": "array", "items": _ref("Event")},
            "last_seq": {"type": "integer"},
            "more": {"type": "boolean", "description": "ask again with after=the last seq"},
            "status": {"type": "string"},
        },
    },
}


def _collection_paths() -> dict[str, Any]:
    """Start and list runs."""
    run_json = _json(_ref("Run"), "the run")
    return {
        "/api/runs": {
            "post": {
                "summary": "Start an agent run (request; after: a follow-up) or a task run (task)",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"oneOf": [_ref("AgentRunRequest"), _ref("TaskRunRequest")]}
                        }
                    },
                },
                "responses": {"201": run_json, **_errors(401, 422)},
            },
            "get": {
                "summary": "List the tenant's runs, newest first",
                "parameters": [
                    {"name": "status", "in": "query", "schema": {"type": "string"}},
                    {"name": "limit", "in": "query", "schema": {"type": "integer", "default": 100}},
                ],
                "responses": {
                    "200": _json(
                        {"type": "object", "properties": {"runs": {"items": _ref("Run")}}},
                        "runs",
                    ),
                    **_errors(401, 422),
                },
            },
        },
    }


def _one_run_paths() -> dict[str, Any]:
    """GET a run and its events, JSON, SSE or WebSocket."""
    run_json = _json(_ref("Run"), "the run")
    return {
        "/api/runs/{run_id}": {
            "get": {
                "summary": "One run, with its pending gates",
                "parameters": [RUN_ID],
                "responses": {"200": run_json, **_errors(401, 404)},
            }
        },
        "/api/runs/{run_id}/events": {
            "get": {
                "summary": "The run's events: JSON, or SSE with Accept: text/event-stream",
                "description": (
                    "SSE: each event is `id: <seq>` + `data: <event JSON>`; a reconnecting "
                    "client sends Last-Event-ID and gets only later events. The stream ends "
                    "with `event: end` after run_finished."
                ),
                "parameters": [
                    RUN_ID,
                    AFTER,
                    {"name": "limit", "in": "query", "schema": {"type": "integer"}},
                    {"name": "Last-Event-ID", "in": "header", "schema": {"type": "string"}},
                ],
                "responses": {
                    "200": {
                        "description": "events",
                        "content": {
                            "application/json": {"schema": _ref("EventPage")},
                            "text/event-stream": {"schema": {"type": "string"}},
                        },
                    },
                    **_errors(401, 404, 422),
                },
            }
        },
        "/api/runs/{run_id}/model_calls/{seq}": {
            "get": {
                "summary": "One model call: its request (rebuilt from the log), reply, usage",
                "parameters": [RUN_ID, {**RUN_ID, "name": "seq", "schema": {"type": "integer"}}],
                "responses": {
                    "200": _json(_ref("ModelCall"), "the model call"),
                    **_errors(401, 404, 422),
                },
            }
        },
        "/api/runs/{run_id}/ws": {
            "get": {
                "summary": "WebSocket: the run's events as text frames (after=SEQ)",
                "description": (
                    "Each frame is one event JSON. The client may send "
                    '`{"type": "confirm", "request_id": ..., "approve": true}` to decide a '
                    "gate. Closes 1000 after run_finished; 4401/4404/4422 for errors."
                ),
                "parameters": [RUN_ID, AFTER],
                "responses": {"101": {"description": "switching protocols"}},
            }
        },
    }


def _action_paths() -> dict[str, Any]:
    """Acting on a run: cancel, decide a gate, resume; and the server's info."""
    run_json = _json(_ref("Run"), "the run")
    return {
        "/api/runs/{run_id}/cancel": {
            "post": {
                "summary": "Cancel a live run",
                "parameters": [RUN_ID],
                "responses": {"200": run_json, **_errors(401, 404, 409)},
            }
        },
        "/api/runs/{run_id}/gates/{gate_id}": {
            "post": {
                "summary": "Approve or reject a pending gate",
                "parameters": [
                    RUN_ID,
                    {**RUN_ID, "name": "gate_id"},
                ],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["approve"],
                                "properties": {
                                    "approve": {"type": "boolean"},
                                    "reason": {"type": "string", "maxLength": 1000},
                                    "by": {
                                        "type": "string",
                                        "maxLength": 80,
                                        "description": "who decides; recorded as "
                                        "`NAME (api:TENANT)`",
                                    },
                                },
                            }
                        }
                    },
                },
                "responses": {
                    "200": _json(
                        _ref("GateDecisionEvent"), "decided: the gate waited in this server"
                    ),
                    "202": _json(
                        _ref("GateDecisionEvent"),
                        "accepted: another process runs the task (it holds the run's lease); "
                        "the decision is in the store (`delivered: store`) and that process "
                        "takes it when it next polls, unless the gate times out first",
                    ),
                    **_errors(401, 404, 409, 422),
                },
            }
        },
        "/api/runs/{run_id}/resume": {
            "post": {
                "summary": "Resume an interrupted run, or one that ended waiting, from its log",
                "parameters": [RUN_ID],
                "responses": {"202": run_json, **_errors(401, 404, 409)},
            }
        },
        "/api/runs/{run_id}/fork": {
            "post": {
                "summary": "Fork an agent run: its first `at` steps served from its log, "
                "then live, with another request or model",
                "parameters": [RUN_ID],
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {
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
                            }
                        }
                    },
                },
                "responses": {"201": _json(_ref("Run"), "the fork"), **_errors(401, 404, 409, 422)},
            }
        },
        "/api/info": {
            "get": {
                "summary": "What this server offers: tools, tasks, default model, models",
                "responses": {"200": _json({"type": "object"}, "info"), **_errors(401)},
            }
        },
    }


def openapi_schema() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {"title": "loopwright", "version": "1"},
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"bearer": []}],
        "paths": {**_collection_paths(), **_one_run_paths(), **_action_paths()},
    }
