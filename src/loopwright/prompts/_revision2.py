"""Revision 2 of the prompted JSON format: the one runs recorded with RunSpec 4 had, kept
byte for byte so they replay and resume as they ran (a run's requests are fingerprinted,
its system prompt with them). `AgentOptions.revision` picks it; new runs use revision 3
(prompts/_templates.py: the same format on one line, as the model should reply, and the
tools as signatures). The examples, the rules and native mode are the same in both."""

from __future__ import annotations

PROMPTED_FORMAT = """\
EXECUTION FORMAT:
You must respond in JSON format with exactly one of these structures, and nothing else:

1. When you need to call a tool:
{
    "thought": "Your reasoning about what to do next",
    "action": "tool_name",
    "action_input": {"arg1": "value1", "arg2": "value2"},
    "is_final": false
}

2. When you have completed the task:
{
    "thought": "Your final reasoning",
    "final_answer": "Your complete response to the user",
    "is_final": true
}

After each tool call you will receive an Observation with the tool's result."""
