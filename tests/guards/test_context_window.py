"""The conversation stays within the context window: old observations are cut first."""

from __future__ import annotations

from guard_helpers import call, final

from loopwright.agent import AgentExecutor, AgentOptions
from loopwright.agent._conversation import Transcript, estimate_tokens
from loopwright.messages import Message
from loopwright.testing import ScriptedModel
from loopwright.tools import tool

SYSTEM = "You are a careful assistant. " * 20


def recount(conversation: Transcript) -> int:
    """The token count from scratch, to check the running one against."""
    total = estimate_tokens(conversation.system.content)
    for message in conversation.messages:
        total += estimate_tokens(message.content) + 8 * len(message.tool_calls)
    return total


def build(observations: list[str]) -> Transcript:
    conversation = Transcript(SYSTEM)
    conversation.append(Message.user("Summarise the logs."))
    for index, text in enumerate(observations):
        conversation.append(Message.assistant(f"reading log {index}"))
        conversation.append(Message.user(text), observation=True)
    return conversation


def test_old_observations_are_shortened_first_keeping_head_and_tail() -> None:
    logs = [f"HEAD{i} " + "x" * 8000 + f" TAIL{i}" for i in range(3)]
    conversation = build(logs)
    assert conversation.total_tokens > 5000
    shortened = conversation.fit(4000)
    assert shortened >= 1
    assert conversation.total_tokens <= 4000
    oldest = conversation.messages[2].content
    assert oldest.startswith("HEAD0") and oldest.endswith("TAIL0")
    assert "characters cut to fit the context window" in oldest
    newest = conversation.messages[-1].content
    assert newest == logs[-1]  # the newest turn is never cut


def test_system_prompt_and_request_are_never_cut() -> None:
    conversation = build(["y" * 20_000, "z" * 20_000])
    conversation.fit(1000)
    messages = conversation.request_messages()
    assert messages[0].content == SYSTEM
    assert messages[1].content == "Summarise the logs."


def test_token_count_is_kept_up_to_date_incrementally() -> None:
    conversation = build(["a" * 4000, "b" * 6000, "c" * 100])
    assert conversation.total_tokens == recount(conversation)
    conversation.fit(1500)
    assert conversation.total_tokens == recount(conversation)
    conversation.append(Message.user("more"))
    assert conversation.total_tokens == recount(conversation)


def test_fit_without_a_limit_changes_nothing() -> None:
    conversation = build(["a" * 4000])
    before = conversation.total_tokens
    assert conversation.fit(None) == 0
    assert conversation.total_tokens == before


@tool
def read_log(name: str) -> str:
    """Read a big log file.

    Args:
        name: the log name
    """
    return f"START {name} " + "log line\n" * 1500 + f"END {name}"


async def test_agent_requests_stay_within_the_window() -> None:
    replies = [call("read_log", name=f"log{i}") for i in range(4)]
    model = ScriptedModel([*replies, final("summary")])
    options = AgentOptions(context_window=6000)
    result = await AgentExecutor(model, [read_log], options=options).run("read all logs")
    assert result.status == "completed"
    last = model.requests[-1].messages
    total_chars = sum(len(m.content) for m in last)
    assert total_chars // 4 <= 6000 + 200  # the estimate the loop works with
    first_observation = next(m.content for m in last if "START log0" in m.content)
    assert "characters cut" in first_observation and "END log0" in first_observation
    assert "characters cut" not in last[-1].content  # the newest observation is whole


def test_a_request_keeps_the_messages_it_was_sent_as_the_conversation_moves_on() -> None:
    conversation = build(["y" * 8000, "z" * 8000])
    sent = conversation.request_messages("note")
    before = tuple(sent)
    assert before[-1].content.endswith("\n\nnote") and before[0] == conversation.system
    conversation.append(Message.assistant("more"))
    assert conversation.fit(3000) >= 1  # rewrites an old observation
    assert tuple(sent) == before and sent == before and hash(sent) == hash(before)
    assert sent[3].content == "y" * 8000 != conversation.messages[2].content
    now = conversation.request_messages()
    assert len(now) == len(before) + 1 and now[-1].content == "more" and now[-2] != before[-1]


def test_a_request_history_reads_as_a_tuple() -> None:
    conversation = build(["a", "b"])
    sent = conversation.request_messages("note")
    as_tuple = tuple(sent)
    assert len(sent) == len(as_tuple) == 6
    assert [sent[i] for i in range(-6, 6)] == [*as_tuple, *as_tuple]
    more = conversation.messages[:1]
    assert sent[1:3] == as_tuple[1:3]
    assert sent + tuple(more) == (*as_tuple, *more) and tuple(more) + sent == (*more, *as_tuple)
    assert list(reversed(sent)) == list(reversed(as_tuple))
    for index in (6, -7):
        try:
            sent[index]
        except IndexError:
            continue
        raise AssertionError(f"index {index} should be out of range")


async def test_a_kept_note_is_not_cut_when_its_observation_is() -> None:
    """Revision 5 keeps each request's note in the conversation: fitting the window
    shortens the observation and leaves its note whole."""
    replies = [call("read_log", name=f"log{i}") for i in range(3)]
    model = ScriptedModel([*replies, final("done")])
    options = AgentOptions(context_window=5000)
    result = await AgentExecutor(model, [read_log], options=options).run("read the logs")
    assert result.status == "completed"
    first = next(m for m in model.requests[-1].messages if "START log0" in m.content)
    assert "characters cut" in first.content and "END log0" in first.content
    assert first.content.endswith(
        "reply with final_answer only when these results answer every part of the task."
    )
    assert "[Iteration 2 of at most" in first.content
