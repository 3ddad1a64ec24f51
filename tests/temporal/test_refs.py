"""References to long tool results (engines/temporal/_refs.py): the workflow's loop can use a
reference as the text (equal texts, equal references; the same summaries), and expanding
it gives the text back, and the request fingerprint of the whole texts."""

from __future__ import annotations

from loopwright.agent._conversation import Transcript
from loopwright.engines.temporal._refs import (
    REF_MIN_CHARS,
    digests_in,
    expand,
    reference,
    request_digest,
)
from loopwright.messages import Message
from loopwright.prompts._turn_notes import iteration_note, observation_text, recap_line, summarize

TEXT = "".join(f"line {i}: {'word ' * (i % 7)}\n" for i in range(2000))


def test_a_long_result_becomes_a_short_reference_that_expands_back() -> None:
    found = reference(TEXT)
    assert found is not None
    ref, digest = found
    assert len(ref) < 1200 < len(TEXT)
    assert reference(TEXT) == found and reference(TEXT + "!") != found  # by content
    assert digests_in({"a": [observation_text("big", ref)]}) == {digest}
    assert expand({"a": [observation_text("big", ref)]}, {digest: TEXT}) == {
        "a": [observation_text("big", TEXT)]
    }
    assert expand(ref, {}) == ref  # an unknown digest is left as it is
    # every summary the loop makes of a result is the same for its reference
    assert summarize(ref, 160) == summarize(TEXT, 160)
    assert recap_line("big", {"n": 1}, ref, False) == recap_line("big", {"n": 1}, TEXT, False)


def test_what_stays_inline() -> None:
    assert reference("x" * (REF_MIN_CHARS - 1)) is None  # short
    assert reference(TEXT, inline=True) is None  # a run with a context window
    assert reference(" " * 5000 + "end") is None  # a head of spaces would summarize otherwise
    ref = reference(TEXT)
    assert ref is not None and reference(ref[0] + "x" * REF_MIN_CHARS) is None  # no nesting


def test_the_fingerprint_is_the_one_of_the_whole_texts() -> None:
    ref = reference(TEXT)
    assert ref is not None
    note = iteration_note(3, 10)

    def conversation(result: str) -> Transcript:
        conv = Transcript("be brief")
        conv.append(Message.user("read it"))
        conv.append(Message.assistant('{"action": "big"}'))
        conv.append(Message.user(observation_text("big", result)), observation=True)
        return conv

    whole, held = conversation(TEXT), conversation(ref[0])
    expanded = [
        Message.from_dict(m)
        for m in expand([m.to_dict() for m in held.request_messages(note)], {ref[1]: TEXT})
    ]
    assert expanded == list(whole.request_messages(note))
    assert held.digest(note, ()) != whole.digest(note, ())
    assert request_digest(expanded, ()) == whole.digest(note, ())
