"""The scrubber remembers texts it found nothing in: never at the cost of a secret."""

from __future__ import annotations

from loopwright.safety.scrub import MEMO_CHARS, MEMO_TEXTS, Scrubber

KEY = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def test_a_text_found_clean_is_caught_by_a_scrubber_that_knows_its_secret() -> None:
    plain = Scrubber()
    text = "the value is hunter2-abcdef"
    assert plain.scrub(text).text == text
    assert plain.scrub_fields({"result": text}) == {"result": text}
    knowing = plain.with_secrets(["hunter2-abcdef"])
    assert knowing.scrub(text).text == "the value is [REDACTED:configured]"
    assert knowing.scrub_fields({"result": text}) == {
        "result": "the value is [REDACTED:configured]"
    }


def test_fields_with_a_remembered_clean_text_and_a_new_secret_are_scrubbed() -> None:
    scrubber = Scrubber()
    assert scrubber.scrub_fields({"a": "line 0", "b": "call_1"}) == {"a": "line 0", "b": "call_1"}
    scrubbed = scrubber.scrub_fields({"a": "line 0", "b": f"token {KEY}"})
    assert scrubbed["a"] == "line 0" and KEY not in scrubbed["b"]
    assert KEY not in scrubber.scrub(f"again {KEY}").text  # a secret is never remembered


def test_the_memo_is_bounded_in_texts_and_in_length() -> None:
    scrubber = Scrubber()
    for index in range(MEMO_TEXTS + 50):
        scrubber.scrub(f"plain text {index}")
    long = "x " * MEMO_CHARS
    scrubber.scrub(long)
    assert len(scrubber._clean) <= MEMO_TEXTS + 1
    assert long not in scrubber._clean and "plain text 3" not in scrubber._clean


def test_a_dict_key_found_harmless_is_caught_by_a_scrubber_that_knows_it() -> None:
    plain = Scrubber()
    fields = {"arguments": {"hunter2-abcdef": "on"}}
    assert plain.scrub_fields(fields) is fields
    assert plain.scrub_fields(fields) is fields  # remembered: the same object again
    knowing = plain.with_secrets(["hunter2-abcdef"])
    assert knowing.scrub_fields(fields) == {"arguments": {"[REDACTED:configured]": "on"}}


def test_a_key_that_names_a_secret_redacts_its_value_every_time() -> None:
    scrubber = Scrubber()
    harmless = {"arguments": {"user": "ann", "text": "line 1"}}
    assert scrubber.scrub_fields(harmless) is harmless
    for attempt in range(3):
        scrubbed = scrubber.scrub_fields({"arguments": {"password": f"s3cret-{attempt}-x"}})
        assert scrubbed == {"arguments": {"password": "[REDACTED:credential]"}}, attempt
