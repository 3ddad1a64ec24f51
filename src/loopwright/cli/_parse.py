"""`loopwright parse`: how would the engine read this model reply?"""

from __future__ import annotations

import argparse
import json
import sys

from loopwright.cli._options import add_options, opt
from loopwright.errors import ConfigurationError
from loopwright.messages import ModelResponse
from loopwright.parsing._chain import read_reply
from loopwright.parsing.messages import response_from_message


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "parse",
        help="show how a model reply is read",
        description="Read a model reply as a run would: one JSON object on stdout with what "
        "it means (an action, a final answer or an error), the parser layer that read it "
        "(native, tagged, react, json, pythonic, text) and whether malformed JSON in it was "
        "repaired. Exit status 1 when it cannot be read.",
    )
    parser.add_argument(
        "file", nargs="?", default="-", help="reply file, or - for stdin (default: -)"
    )
    add_options(
        parser,
        [
            opt(
                "--message",
                action="store_true",
                group="model",
                help="the input is a JSON assistant message (OpenAI, Ollama or Anthropic shape)",
            ),
        ],
        None,
    )
    parser.set_defaults(handler=parse_command)


def _read(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise ConfigurationError(f"cannot read {path}: {exc.strerror}") from None


def parse_command(args: argparse.Namespace) -> int:
    raw = _read(args.file)
    if args.message:
        try:
            message = json.loads(raw)
        except json.JSONDecodeError as exc:
            out = {"kind": "error", "message": f"--message input is not JSON: {exc}"}
            print(json.dumps(out, ensure_ascii=False))
            return 1
        response = response_from_message(message)
    else:
        response = ModelResponse(text=raw)
    if isinstance(response, str):
        print(json.dumps({"kind": "error", "message": response}, ensure_ascii=False))
        return 1
    reading = read_reply(response)
    outcome = reading.outcome
    shown = {**outcome.to_dict(), "layer": reading.layer, "repaired": reading.repaired}
    print(json.dumps(shown, ensure_ascii=False))
    return 1 if outcome.kind == "error" else 0
