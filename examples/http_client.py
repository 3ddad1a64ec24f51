"""Start a run over loopwright's HTTP API and follow its events live (Server-Sent Events).

    loopwright serve &                      # http://127.0.0.1:8765
    python examples/http_client.py "Say hello through the echo tool" \
        --model scripted:examples/echo.json --tools echo

If the connection drops, it reconnects with `Last-Event-ID` (the last seq it saw), so it
misses nothing and sees nothing twice. Exit code 0 when the run completed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import httpx


def start(client: httpx.Client, args: argparse.Namespace) -> str:
    body: dict[str, Any] = {
        "request": args.prompt,
        "tools": args.tools.split(",") if args.tools else [],
    }
    if args.model:
        body["model"] = args.model
    response = client.post("/api/runs", json=body)
    if response.status_code != 201:
        error = response.json()["error"]
        raise SystemExit(f"cannot start the run: {error['message']}")
    run_id: str = response.json()["run_id"]
    return run_id


def describe(event: dict[str, Any]) -> str | None:
    """One line for the events worth printing."""
    kind = event["type"]
    if kind == "tool_call":
        mark = "✗" if event["is_error"] else "✓"
        return (
            f"  {mark} #{event['iteration_number']} {event['tool_name']}({event['args_summary']})"
            f" -> {event['result_summary']}  [{event['duration_ms']:.0f} ms]"
        )
    if kind == "model_response" and event.get("thought"):
        return f"  · {event['thought']}"
    if kind == "confirmation_required":
        where = f"/api/runs/{event['run_id']}/gates/{event['request_id']}"
        return f"  ? {event['message']} (approve: POST {where})"
    if kind == "run_finished":
        return f"{event['status']}: {event.get('answer') or event.get('reason') or ''}"
    return None


def follow(client: httpx.Client, run_id: str, retries: int = 5) -> str:
    """Print the run's events as they happen; reconnect from the last seq on a dropped stream."""
    last_seq, status = 0, "unknown"
    for _ in range(retries):
        headers = {"Accept": "text/event-stream", "Last-Event-ID": str(last_seq)}
        try:
            with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as stream:
                data: list[str] = []
                name = None
                for line in stream.iter_lines():
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif line == "" and data:
                        payload = json.loads("\n".join(data))
                        data, ended, name = [], name == "end", None
                        if ended:
                            return str(payload["status"])
                        last_seq = payload["seq"]
                        text = describe(payload)
                        if text:
                            print(text, flush=True)
                        if payload["type"] == "run_finished":
                            status = payload["status"]
        except httpx.TransportError as exc:
            print(f"  (connection lost: {exc}; resuming after seq {last_seq})", file=sys.stderr)
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("prompt")
    parser.add_argument("--url", default="http://127.0.0.1:8765")
    parser.add_argument("--token", default=None, help="Bearer token, if the server has tokens")
    parser.add_argument("--model", default=None, help="model spec (default: the server's)")
    parser.add_argument("--tools", default="", help="comma-separated tool names")
    args = parser.parse_args()
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    timeout = httpx.Timeout(10.0, read=None)
    with httpx.Client(base_url=args.url, headers=headers, timeout=timeout) as client:
        run_id = start(client, args)
        print(f"run {run_id}", flush=True)
        status = follow(client, run_id)
    return 0 if status == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
