"""Several JSON calls in one reply, one after the other (`consecutive_calls`).

The parser chain reads a reply's first JSON call (a small model often goes on after it with
an invented observation or answer). A run that offers several calls a reply (prompted
mode, `AgentOptions.max_calls_per_reply` given) reads on: the calls written one after the
other, with nothing but white space, commas or a code fence between them.
"""

from __future__ import annotations

import json
import re

from loopwright.messages import ToolCall
from loopwright.parsing._layers import split_thinking
from loopwright.parsing._result import ParsedAction
from loopwright.parsing._shapes import outcome_from_value

_DECODER = json.JSONDecoder()
_FENCE_LINE = re.compile(r"^[ \t]*```[\w-]*[ \t]*$", re.M)
_BETWEEN = re.compile(r"[\s,]*")
MAX_CALLS_READ = 64
"""At most this many calls are read of one reply (the run runs `max_calls_per_reply`)."""


def consecutive_calls(text: str) -> tuple[ToolCall, ...]:
    """The JSON calls of `text` from its first JSON value on, as long as each value is a
    call (or a list of calls) and only white space, commas or code fences come between
    them; () when the first value is not a call. Prose, an observation or a final answer
    after a call ends the reading."""
    body, _ = split_thinking(text)
    body = _FENCE_LINE.sub("", body)
    start = min((i for i in (body.find("{"), body.find("[")) if i >= 0), default=-1)
    calls: list[ToolCall] = []
    position = start
    while 0 <= position < len(body) and len(calls) < MAX_CALLS_READ:
        if body[position] not in "{[":
            break
        try:
            value, position = _DECODER.raw_decode(body, position)
        except (ValueError, RecursionError):
            break
        outcome = outcome_from_value(value)
        if not isinstance(outcome, ParsedAction):
            break
        calls.extend(outcome.calls)
        position = _BETWEEN.match(body, position).end()  # type: ignore[union-attr]
    return tuple(calls[:MAX_CALLS_READ])
