"""The API's OpenAPI 3.1 schema, written by hand (served at /api/openapi.json): its paths;
the component schemas they refer to are in server/_openapi_schemas.py."""

from __future__ import annotations

from typing import Any

from loopwright.server._openapi_schemas import SCHEMAS, ref


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _body(component: str) -> dict[str, Any]:
    """A required JSON request body of the component schema `component`."""
    return {"required": True, "content": {"application/json": {"schema": ref(component)}}}


def _errors(*codes: int) -> dict[str, Any]:
    text = {
        401: "missing or unknown token",
        404: "no such run for this tenant",
        409: "the run is not in a state that allows this",
        422: "a field is invalid; `error.field` names it",
    }
    return {str(code): _json(ref("Error"), text[code]) for code in codes}


RUN_ID = {"name": "run_id", "in": "path", "required": True, "schema": {"type": "string"}}
AFTER = {
    "name": "after",
    "in": "query",
    "description": "only events with a larger seq",
    "schema": {"type": "integer", "minimum": 0, "default": 0},
}


def _collection_paths() -> dict[str, Any]:
    """Start and list runs."""
    run_json = _json(ref("Run"), "the run")
    return {
        "/api/runs": {
            "post": {
                "summary": "Start an agent run (request; after: a follow-up) or a task run (task)",
                "requestBody": {
                    "required": True,
                    "content": {
                        "application/json": {
                            "schema": {"oneOf": [ref("AgentRunRequest"), ref("TaskRunRequest")]}
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
                        {"type": "object", "properties": {"runs": {"items": ref("Run")}}},
                        "runs",
                    ),
                    **_errors(401, 422),
                },
            },
        },
    }


def _one_run_paths() -> dict[str, Any]:
    """GET a run and its events, JSON, SSE or WebSocket."""
    run_json = _json(ref("Run"), "the run")
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
                            "application/json": {"schema": ref("EventPage")},
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
                    "200": _json(ref("ModelCall"), "the model call"),
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
    """Acting on a run: cancel, decide a gate, resume, fork."""
    run_json = _json(ref("Run"), "the run")
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
                "requestBody": _body("GateDecisionRequest"),
                "responses": {
                    "200": _json(
                        ref("GateDecisionEvent"), "decided: the gate waited in this server"
                    ),
                    "202": _json(
                        ref("GateDecisionEvent"),
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
                "requestBody": _body("ForkRequest"),
                "responses": {"201": _json(ref("Run"), "the fork"), **_errors(401, 404, 409, 422)},
            }
        },
    }


def _server_paths() -> dict[str, Any]:
    """What the server offers."""
    return {
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
        "paths": {**_collection_paths(), **_one_run_paths(), **_action_paths(), **_server_paths()},
    }
