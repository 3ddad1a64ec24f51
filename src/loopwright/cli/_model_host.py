"""`loopwright model-host status|stop`: the embedded model's host process, seen and stopped.

loopwright model-host status
loopwright model-host stop
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from loopwright.cli._options import add_options, opt
from loopwright.cli._output import print_json
from loopwright.safety.terminal import visible


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "model-host",
        help="show or stop the process that holds the embedded model for your runs",
        description="The model host (default: started when a run needs the embedded model, "
        "stopped after LOOPWRIGHT_MODEL_HOST_IDLE=300 seconds without a call) holds the "
        "embedded model (--model local) once for every loopwright process of yours.",
    )
    sub = parser.add_subparsers(dest="host_command", metavar="ACTION", required=True)
    status = sub.add_parser("status", help="the hosts running, their calls, who holds the model")
    add_options(status, [_json("print one JSON object")], None)
    status.set_defaults(handler=status_command)
    stop = sub.add_parser(
        "stop", help="stop every model host of yours (a call it was running fails, to retry)"
    )
    add_options(stop, [_json("print one JSON array, an object per host stopped")], None)
    stop.set_defaults(handler=stop_command)


def _json(help_text: str) -> Any:
    return opt("--json", help=help_text, group="output", action="store_true")


def status_command(args: argparse.Namespace) -> int:
    from loopwright.models import host_statuses

    found = host_statuses()
    if args.json:
        print_json(found)
        return 0
    hosts = found["hosts"]
    if not hosts:
        print(f"no model host is running (one starts when a run needs the embedded model); "
              f"folder {found['folder']}")  # fmt: skip
    for host in hosts:
        print(visible(_host_line(host)))
        for call in host.get("calls") or ():
            print(visible(f"  {_call_line(call)}"))
    if found["turn"]:
        print(visible(f"the model is in use by {_who(found['turn'])}"))
    return 0


def stop_command(args: argparse.Namespace) -> int:
    from loopwright.models import stop_hosts

    stopped = stop_hosts()
    if args.json:
        print_json(stopped)
        return 0
    if not stopped:
        print("no model host was running")
    for host in stopped:
        print(visible(f"model host pid {host['pid']} ({host.get('model')}): {host['how']}"))
    return 0


def _host_line(host: dict[str, Any]) -> str:
    parts = [f"model host pid {host.get('pid')}", str(host.get("state"))]
    if host.get("model"):
        parts.append(str(host["model"]).rsplit("/", 1)[-1])
    if host.get("started"):
        parts.append(f"up {_ago(float(host['started']))}")
    if host.get("rss_mb"):
        parts.append(f"{host['rss_mb']:,.0f} MB resident")
    if host.get("served") is not None:
        parts.append(f"{host['served']} calls served")
    if host.get("idle_s"):
        parts.append(f"stops after {host['idle_s']:.0f} s idle")
    if host.get("load_error"):
        parts.append(f"could not load: {host['load_error']}")
    if host.get("state") == "not answering":
        parts.append(f"log {host.get('log')}; `loopwright model-host stop` ends it")
    return " · ".join(parts)


def _call_line(call: dict[str, Any]) -> str:
    started = float(call.get("started") or 0)
    phase = call.get("phase") or "waiting"
    since = _ago(started or float(call.get("since") or time.time()))
    detail = f" ({call['detail']})" if call.get("detail") else ""
    return f"call of {_who(call)}: {phase}{detail}, {since}"


def _who(info: dict[str, Any]) -> str:
    what = f" ({info['command']})" if info.get("command") else ""
    return f"pid {info.get('pid')}{what}"


def _ago(since: float) -> str:
    seconds = max(0.0, time.time() - since)
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
