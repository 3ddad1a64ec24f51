"""Revision 1 of the system prompt: the one runs recorded with RunSpec 1 to 3 had, kept
byte for byte so they replay and resume as they ran (a run's requests are fingerprinted,
its system prompt with them). `AgentOptions.revision` picks it; new runs use revision 2
(prompts/_templates.py: `is_final` in the JSON format, a few-shot example in native mode
too, examples that call only the run's own tools, the token-limit rule)."""

# ruff: noqa: E501  (the example lines are kept as they were sent)

from __future__ import annotations

PROMPTED_FORMAT = """\
EXECUTION FORMAT:
You must respond in JSON format with exactly one of these structures, and nothing else:

1. When you need to call a tool:
{
    "thought": "Your reasoning about what to do next",
    "action": "tool_name",
    "action_input": {"arg1": "value1", "arg2": "value2"}
}

2. When you have completed the task:
{
    "thought": "Your final reasoning",
    "final_answer": "Your complete response to the user"
}

After each tool call you will receive an Observation with the tool's result."""

PROMPTED_EXAMPLES = """\
EXAMPLE:
User: What is in notes.txt?
Assistant: {"thought": "I should read the file first.", "action": "read", "action_input": {"path": "notes.txt"}}
User: Observation from read: buy milk
Assistant: {"thought": "I have the content.", "final_answer": "notes.txt says: buy milk"}
"""

WORKSPACE_EXAMPLE_PROMPTED = """\
EXAMPLE (work on files: read, understand, modify, verify):
User: In settings.py, raise the retry limit to 5.
Assistant: {{"thought": "Read the file first to see how the limit is written.", "action": "{read}", "action_input": {{"path": "settings.py"}}}}
User: Observation from {read}: TIMEOUT = 30
RETRIES = 3
Assistant: {{"thought": "The limit is the line RETRIES = 3; change only that line.", "action": "{edit}", "action_input": {edit_args}}}
User: Observation from {edit}: edited settings.py: replaced 1 occurrence (line 2)
Assistant: {{"thought": "Check the change took effect.", "action": "{verify}", "action_input": {verify_args}}}
User: Observation from {verify}: {verify_result}
Assistant: {{"thought": "The file now says RETRIES = 5.", "final_answer": "settings.py now sets RETRIES = 5 (was 3)."}}
"""

WORKSPACE_EXAMPLE_NATIVE = """\
HOW TO WORK ON FILES (read, understand, modify, verify):
1. Read the file before changing it (call {read}); never guess its content.
2. Understand what must change: find the exact lines.
3. Modify only those lines (call {edit} with text copied exactly from the file).
4. Verify the change (call {verify}), then give your final answer saying what changed.
"""
