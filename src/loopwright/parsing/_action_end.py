"""Where a reply's first complete action ends, read as the reply streams in.

Small models often go on after their action: an invented observation, more calls, an
invented final answer. The engine runs the first action only and throws the rest away,
so generating it is time lost. `ActionEnd` is fed the reply's pieces as they arrive and
says, as soon as it can, where the first complete action ends; the model adapters then
stop generating there.

A complete action is one of (outside a `<think>` block):

- a closed top-level JSON object or array that reads as a call or a final answer (the
  JSON layer's reading: `{"action": ..., "action_input": ...}`, `{"name", "arguments"}`,
  `{"final_answer": ...}`, `{"tool_calls": [...]}`, a list of calls...);
- a top-level JSON object whose call is already whole, a name and its arguments (or whose
  `final_answer` is), when a comma says another key follows: the rest of the object
  (`"is_final": false}` in the prompted format, 7 tokens of a 45-token reply) says nothing
  the engine reads, so the reply ends before the comma and `closing` (`}`) closes the
  object the engine reads (`action_text`);
- a closed `<tool_call>...</tool_call>` (or `<function=...>...</function>`) that the next
  text does not follow with another one: parallel calls stay whole;
- an `Action:` line with its `Action Input:` (a closed JSON value, or the rest of its line).

With `calls_in_a_row` (a run that reads several JSON calls a reply), a JSON call is followed
as a call tag is: another JSON value after it (white space or a comma between) goes on the
action (so do code fences between them), anything else ends it after the last call; a call
object is read once it closes.

Nothing else ends a reply early: prose, a `Final Answer:` (it runs to the end of the
reply), an unclosed bracket, a pythonic call. A reply is never cut inside its first action:
the end is always after the action's last character.
"""

from __future__ import annotations

import json
import re

from loopwright.parsing._extract import decode
from loopwright.parsing._shapes import COMPLETING_KEYS, outcome_kind, says_it_all

_CLOSERS = {"{": "}", "[": "]"}
_THINK_OPEN = ("<think>", "<thinking>")
_THINK_CLOSE = ("</think>", "</thinking>")
_CALL_OPEN = ("<tool_call>", "<function=")
_CALL_CLOSE = ("</tool_call>", "</function>")
_TAGS = (*_THINK_OPEN, *_THINK_CLOSE, *_CALL_OPEN, *_CALL_CLOSE)
_ACTION = re.compile(r"[ \t]*Action[ \t]*:[ \t]*\S", re.I)
_ACTION_INPUT = re.compile(r"[ \t]*Action[ \t]+Input[ \t]*:[ \t]*(.*)", re.I)
_FINAL = re.compile(r"[ \t]*Final[ \t]+Answer[ \t]*:", re.I)
_LINE_MARKS = re.compile(r"[<\n{[]")
_TAG_MARK = re.compile("<")
_NOT_SPACE = re.compile(r"\S")
_JSON_NEXT = re.compile(r'[^][{},"]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^][{},"]*+)*+([][{},"])', re.S)
_STRING_MARKS = re.compile(r'["\\]')
_FENCES = re.compile(r"(?:```[\w-]*\s*)+")
"""What `ActionEnd` looks for next: outside JSON (`_next_mark`); in JSON, past whole
strings and whatever else is not a bracket or a comma, the next bracket or comma, or the
quote of a string not whole yet; in such a string, its quote or a backslash."""
_COMPLETING_KEY = re.compile(f'"(?:{"|".join(map(re.escape, COMPLETING_KEYS))})"\\s*:')
"""A key without which an object cannot say it all, as written (a key spelled with an
escape, `"action\\u005finput"`, is read when its object closes)."""
_INPUT_LEAD = re.compile(r"[ \t]*(?:Action[ \t]+Input[ \t]*:)?[ \t]*(?:```(?:json)?[ \t]*)?", re.I)


class ActionEnd:
    """Fed a reply piece by piece, finds the end of its first complete action.

    `feed(piece)` returns the length of the reply's text up to the end of that action
    once it is known (the same number on every later call), else None. The answer does not
    depend on how the text is cut into pieces: a tag or a line that may still be growing
    is read once it is whole."""

    def __init__(self, *, calls_in_a_row: bool = False) -> None:
        self.calls_in_a_row = calls_in_a_row
        """JSON calls written one after the other are one action (see the module)."""
        self.text = ""
        self.end: int | None = None
        self._pos = 0
        self._closers: list[str] = []
        self._start = 0
        self._in_string = False
        self._escaped = False
        self._think = False
        self._in_call = False
        self._after_call: int | None = None
        self._last_call_end: int | None = None
        """With `calls_in_a_row`: where the last JSON call read so far ends."""
        self._line_start = 0
        self._action_seen = False
        self._input_open = False
        """An `Action Input:` line with no value yet: the value follows on a later line."""
        self._input_json = False
        self._given_up = False
        self.closing = ""
        """What closes the action when the reply ends before its object's closing brace:
        `}`, else nothing."""

    def feed(self, piece: str) -> int | None:
        self.text += piece
        if self.end is None and not self._given_up:
            self._scan()
        return self.end

    def _scan(self) -> None:
        text = self.text
        i = self._pos
        while i < len(text) and self.end is None and not self._given_up:
            if self._closers:
                i = self._in_json(text, i)
                continue
            i = self._next_mark(text, i)
            if i == len(text):
                break
            char = text[i]
            if char == "<":
                step = self._tag(text, i)
                if step == 0:
                    break  # a tag may be starting: wait for the rest of it
                i += step
            elif self._after_call is not None:
                if self.calls_in_a_row and char == "`":  # code fences between calls
                    past = _past_fences(text, i)
                    if past is None:
                        break  # a fence may be starting or going on: wait for more
                    if past > i:
                        i = past
                        continue
                if not (self.calls_in_a_row and char in "{[,"):
                    self.end = self._after_call  # no second call follows: the action ends
                    continue
                self._after_call = None  # another JSON value follows the call
                self._line_start = i
                if char == ",":
                    i += 1
                    continue
                self._closers.append(_CLOSERS[char])
                self._start = i
                self._input_json = False
                i += 1
            elif char == "\n":
                self._line(text, i)
                i += 1
                self._line_start = i
            else:  # an opening bracket
                if not self._action_seen and _FINAL.match(text, self._line_start, i):
                    self._given_up = True  # a final answer runs to the end of the reply
                    break
                self._closers.append(_CLOSERS[char])
                self._start = i
                self._input_json = self._input_open or bool(
                    self._action_seen and _INPUT_LEAD.fullmatch(text, self._line_start, i)
                )
                i += 1
        self._pos = i

    def _next_mark(self, text: str, i: int) -> int:
        """Outside JSON, the index of the next character from `i` that can change what is
        read (`len(text)`: none yet): in a `<think>` block a tag; after a call tag anything
        but white space; elsewhere a tag, a line's end or an opening bracket."""
        if self._think:
            marks = _TAG_MARK
        elif self._after_call is not None:
            marks = _NOT_SPACE
        else:
            marks = _LINE_MARKS
        found = marks.search(text, i)
        return len(text) if found is None else found.start()

    def _in_json(self, text: str, i: int) -> int:
        """Inside a top-level JSON value from `i`: reads up to the next bracket or comma
        outside strings (or a string not whole yet) and acts on it; the index after it."""
        if self._in_string:
            return self._string_end(text, i)
        token = _JSON_NEXT.match(text, i)
        if token is None:
            return len(text)
        found, i = token.group(1), token.start(1)
        if found == '"':  # a string that goes on in the next piece
            self._in_string = True
            return self._string_end(text, i + 1)
        if found in _CLOSERS:
            self._closers.append(_CLOSERS[found])
        elif found == ",":
            if self._closers == ["}"]:
                self._another_key(text, i)
        elif self._closers.pop() != found:  # a closing bracket
            self._given_up = True  # mismatched brackets: no reading to trust
        elif not self._closers:
            self._closed(text, i + 1)
        return i + 1

    def _string_end(self, text: str, i: int) -> int:
        """Inside a JSON string not whole yet, from `i`: the index after its closing quote,
        or the end of the text when it goes on (a backslash escapes the character after it,
        which may come in the next piece)."""
        while i < len(text):
            if self._escaped:
                self._escaped = False
                i += 1
                continue
            mark = _STRING_MARKS.search(text, i)
            if mark is None:
                return len(text)
            i = mark.end()
            if mark.group() == '"':
                self._in_string = False
                return i
            self._escaped = True
        return i

    def _closed(self, text: str, after: int) -> None:
        """A top-level JSON value ended just before `after`."""
        if self._think or self._in_call:
            return  # a call tag ends at its closing tag
        if self._input_json:
            self.end = after
            return
        kind = outcome_kind(decode(text[self._start : after]))
        if self.calls_in_a_row and kind == "action":
            self._after_call = self._last_call_end = after  # another call may follow it
        elif self._last_call_end is not None:
            self.end = self._last_call_end  # not a call after the calls: they end the action
        elif kind is not None:
            self.end = after

    def _another_key(self, text: str, comma: int) -> None:
        """A top-level object is about to get another key: end before it when the object
        so far, closed, is a whole call or a final answer (`says_it_all`)."""
        if self._think or self._in_call or self._input_json or text[self._start] != "{":
            return
        if self.calls_in_a_row:
            return  # another call may follow this one's object: read it when it closes
        if not _COMPLETING_KEY.search(text, self._start, comma):
            return  # no argument, `tool_calls` or named final answer yet: nothing to read
        try:
            value = json.loads(text[self._start : comma] + "}")
        except (ValueError, RecursionError):
            return  # not strict JSON (single quotes...): read when the object closes
        if isinstance(value, dict) and says_it_all(value):
            self.end, self.closing = comma, "}"

    def _tag(self, text: str, i: int) -> int:
        """At a `<`: how far a known tag reaches (acting on it), 1 for no tag, 0 to wait."""
        rest = text[i : i + 12].lower()
        tag = next((t for t in _TAGS if rest.startswith(t)), None)
        if tag is None:
            if (
                len(rest) < 12
                and i + len(rest) == len(text)
                and any(t.startswith(rest) for t in _TAGS)
            ):
                return 0
            if self._after_call is not None:
                self.end = self._after_call
            return 1
        if self._think:
            self._think = tag not in _THINK_CLOSE
        elif tag in _THINK_OPEN:
            self._think = self._after_call is None
            if self._after_call is not None:
                self.end = self._after_call
        elif tag in _CALL_OPEN:
            self._in_call, self._after_call = True, None
        elif tag in _CALL_CLOSE and self._in_call:
            self._in_call, self._after_call = False, i + len(tag)
        elif self._after_call is not None:
            self.end = self._after_call
        return len(tag)

    def _line(self, text: str, newline: int) -> None:
        """A whole line outside JSON, tags and thinking: the `Action:` format."""
        if self._in_call:
            return
        start = self._line_start
        if not self._action_seen:
            if _FINAL.match(text, start, newline):
                self._given_up = True  # a final answer runs to the end of the reply
            elif _ACTION.match(text, start, newline):
                self._action_seen = True
            return
        given = _ACTION_INPUT.match(text, start, newline)
        if given is not None:
            value = given.group(1).strip()
            self._input_open = not value or value.startswith("```")
            if value and not self._input_open:
                self.end = newline  # a plain input is the rest of its line
        elif self._input_open:
            if text[start:newline].strip() and not text[start:newline].strip().startswith("```"):
                self.end = newline  # the input on the line after `Action Input:`
        elif text[start:newline].strip():
            self.end = start  # an action with no input line: it ends where this line starts


def _past_fences(text: str, i: int) -> int | None:
    """At a backtick after a call: the index after the code fences there (`i` when there is
    none), or None when the text ends in them (a fence may still be growing)."""
    found = _FENCES.match(text, i)
    end = found.end() if found is not None else i
    if end == len(text) or (end == i and "```".startswith(text[i:])):
        return None
    return end


def action_end(text: str, *, calls_in_a_row: bool = False) -> int | None:
    """The end of `text`'s first complete action, read as one piece (None: no such end)."""
    return ActionEnd(calls_in_a_row=calls_in_a_row).feed(text)


def action_text(text: str, *, calls_in_a_row: bool = False) -> str | None:
    """`text` up to the end of its first complete action, closed (`ActionEnd.closing`):
    what the engine reads of a reply cut there (None: no complete action)."""
    watcher = ActionEnd(calls_in_a_row=calls_in_a_row)
    end = watcher.feed(text)
    return None if end is None else text[:end] + watcher.closing
