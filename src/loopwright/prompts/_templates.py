"""The default system prompt templates, revision 4 (seed 002's ReAct JSON format with
`is_final`, written on one line as the model should reply; seed 003's few-shot examples in
both tool modes). The parts every run shares come first (the intro, the format, the rules,
the example) and the run's own parts last (a skill's instructions, the workspace, the
tools), so a model server's prompt cache, which keeps the longest prefix a prompt shares
with the one before, reuses the shared part from one run to the next. What revisions 1 to 3
had instead is kept in _revision1.py, _revision2.py and _revision3.py."""

from __future__ import annotations

SYSTEM_PROMPT_TEMPLATE = """\
{intro}

{format_section}

RULES:
- Think step by step about how to accomplish the task
- Use tools to gather information and perform actions; never invent a tool's result
- Call one tool per reply, and use each result for the next step
- If a tool fails, try an alternative approach
- Continue until the task is complete or you cannot make progress
- Provide clear, actionable final answers
{token_rule}{format_rule}
{examples_section}{skill_section}{workspace_section}{available_files_section}
AVAILABLE TOOLS:
{tool_descriptions}"""

PROMPTED_FORMAT = """\
EXECUTION FORMAT:
Reply with exactly one JSON object on one line, and nothing else. To call a tool:
{"thought": "a short reason for this call", "action": "tool_name", "action_input": {"arg1": "value1"}, "is_final": false}
When the task is complete:
{"thought": "a short reason", "final_answer": "your complete answer to the user", "is_final": true}
After each tool call you will receive an Observation with the tool's result."""

PROMPTED_FORMAT_8 = """\
EXECUTION FORMAT:
Reply with exactly one JSON object on one line, and nothing else. To call a tool:
{"thought": "a short reason for this call", "action": "tool_name", "action_input": {"arg1": "value1"}, "is_final": false}
When the task is complete:
{"thought": "a short reason", "final_answer": "your complete answer to the user", "is_final": true}
If no listed tool does what the task asks, do not call one: reply with final_answer in one or two sentences.
After each tool call you will receive an Observation with the tool's result."""
"""Revision 8's format: revision 4's with the way out when no tool fits (asked a question
none of its tools fits, the 1.5B model called a real but unsuitable tool, or answered in
100 to 500 tokens: BFCL's irrelevance questions)."""

SEVERAL_CALLS_FORMAT = """\
EXECUTION FORMAT:
Reply with JSON objects, one on each line, and nothing else. To call a tool:
{{"thought": "a short reason for this call", "action": "tool_name", "action_input": {{"arg1": "value1"}}, "is_final": false}}
When the task needs several calls that do not need each other's results, write up to {limit} such objects in one reply, one per line; they run in order. A call that needs an earlier call's result waits for the next reply.
When the task is complete, one object:
{{"thought": "a short reason", "final_answer": "your complete answer to the user", "is_final": true}}
If no listed tool does what the task asks, do not call one: reply with final_answer in one or two sentences.
After the calls you will receive an Observation with each tool's result."""
"""Revision 8's format when a prompted reply may carry several calls
(`AgentOptions.max_calls_per_reply` given, more than 1)."""

ONE_CALL_RULE = "- Call one tool per reply, and use each result for the next step"
SEVERAL_CALLS_RULE = (
    "- Calls that need an earlier result go in the next reply; independent calls may share one"
)
SEVERAL_CALLS_FORMAT_RULE = "- Always respond with valid JSON in the format above"

PROMPTED_ANSWER_FORMAT = """\
EXECUTION FORMAT:
Reply with exactly one JSON object on one line, and nothing else:
{"thought": "a short reason", "final_answer": "your complete answer to the user", "is_final": true}"""
"""The format of a run with no tools: only an answer to give (shown a call's structure, the
1.5B model called a tool it made up)."""

TOKEN_RULE = (
    "- Mind the token limit{limit}: keep each reply short, quote only the part of a tool "
    "result you need, and read a big file in parts"
)

PROMPTED_RULE = "- Always respond with one valid JSON object in the format above"

NATIVE_FORMAT = """\
EXECUTION FORMAT:
Call tools with the tool-calling interface when you need them. When the task is complete,
reply with your final answer as plain text, without calling a tool."""

NATIVE_RULE = "- Reply with plain text only when you are giving the final answer"

PROMPTED_EXAMPLES = """\
EXAMPLE:
User: What is in notes.txt?
Assistant: {"thought": "I should read the file first.", "action": "read", "action_input": {"path": "notes.txt"}, "is_final": false}
User: Observation from read: buy milk
Assistant: {"thought": "I have the content.", "final_answer": "notes.txt says: buy milk", "is_final": true}
"""

TWO_CALL_EXAMPLES = """\
EXAMPLE:
User: What do notes.txt and todo.txt say?
Assistant: {"thought": "Read notes.txt first.", "action": "read", "action_input": {"path": "notes.txt"}, "is_final": false}
User: Observation from read: buy milk
Assistant: {"thought": "I still need todo.txt.", "action": "read", "action_input": {"path": "todo.txt"}, "is_final": false}
User: Observation from read: call Bob
Assistant: {"thought": "I have both files.", "final_answer": "notes.txt says: buy milk; todo.txt says: call Bob", "is_final": true}
"""
"""Revision 5's example: a task that needs two calls (with one, the 1.5B model answered
two-part tasks after their first call, inventing the second result)."""

SEVERAL_CALLS_EXAMPLES = """\
EXAMPLE:
User: What do notes.txt and todo.txt say?
Assistant: {"thought": "Read notes.txt.", "action": "read", "action_input": {"path": "notes.txt"}, "is_final": false}
{"thought": "Read todo.txt.", "action": "read", "action_input": {"path": "todo.txt"}, "is_final": false}
User: Observation from read: buy milk

Observation from read: call Bob
Assistant: {"thought": "I have both files.", "final_answer": "notes.txt says: buy milk; todo.txt says: call Bob", "is_final": true}
"""
"""Revision 8's example when a reply may carry several calls: the two independent reads of
the two-call example in one reply."""

ILLUSTRATION_HEADING = (
    "EXAMPLE (its read tool is an illustration: call only the tools listed below)"
)

PROMPTED_ANSWER_EXAMPLE = """\
EXAMPLE:
User: What is 6 * 7?
Assistant: {"thought": "I can answer this myself.", "final_answer": "6 * 7 = 42", "is_final": true}
"""

INTRO_PLAIN = "You are a capable assistant that completes tasks by calling tools."
INTRO_SKILL = "You are executing the '{skill_name}' skill autonomously."

WORKSPACE_EXAMPLE_PROMPTED = """\
EXAMPLE (work on files: read, understand, modify, verify):
User: In settings.py, raise the retry limit to 5.
Assistant: {{"thought": "Read the file first to see how the limit is written.", "action": "{read}", "action_input": {{"path": "settings.py"}}, "is_final": false}}
User: Observation from {read}: TIMEOUT = 30
RETRIES = 3
Assistant: {{"thought": "The limit is the line RETRIES = 3; change only that line.", "action": "{edit}", "action_input": {edit_args}, "is_final": false}}
User: Observation from {edit}: edited settings.py: replaced 1 occurrence (line 2)
Assistant: {{"thought": "Check the change took effect.", "action": "{verify}", "action_input": {verify_args}, "is_final": false}}
User: Observation from {verify}: {verify_result}
Assistant: {{"thought": "The file now says RETRIES = 5.", "final_answer": "settings.py now sets RETRIES = 5 (was 3).", "is_final": true}}
"""

NATIVE_EXAMPLES = """\
EXAMPLE (tool calls go through the tool-calling interface; here they are shown as name(arguments)):
User: What is in notes.txt?
Assistant, calling a tool: read(path="notes.txt")
Tool result of read: buy milk
Assistant: notes.txt says: buy milk
(That last reply calls no tool: it is the final answer, and it ends the task.)
"""

NATIVE_ANSWER_EXAMPLE = """\
EXAMPLE:
User: What is 6 * 7?
Assistant: 6 * 7 = 42
(That reply calls no tool: it is the final answer, and it ends the task.)
"""

WORKSPACE_EXAMPLE_NATIVE = """\
EXAMPLE (work on files: read, understand, modify, verify; tool calls go through the
tool-calling interface, shown here as name(arguments)):
User: In settings.py, raise the retry limit to 5.
Assistant, calling a tool: {read}(path="settings.py")
Tool result of {read}: TIMEOUT = 30
RETRIES = 3
Assistant, calling a tool: {edit}({edit_args})
Tool result of {edit}: edited settings.py: replaced 1 occurrence (line 2)
Assistant, calling a tool: {verify}({verify_args})
Tool result of {verify}: {verify_result}
Assistant: settings.py now sets RETRIES = 5 (was 3).
(That last reply calls no tool: it is the final answer, and it ends the task.)
"""
