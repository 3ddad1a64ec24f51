"""Revision 3's layout of the system prompt: the one runs recorded with RunSpec 5 had
(and revisions 1 and 2 before it), kept byte for byte so they replay and resume as they
ran (a run's requests are fingerprinted, its system prompt with them).
`AgentOptions.revision` picks it; new runs use revision 4 (prompts/_templates.py: the same
texts with the parts every run shares first and the run's own tools last, so a server's
prompt cache reuses the shared part from one run to the next)."""

from __future__ import annotations

SYSTEM_PROMPT_TEMPLATE = """\
{intro}
{skill_section}{workspace_section}{available_files_section}
AVAILABLE TOOLS:
{tool_descriptions}

{format_section}

RULES:
- Think step by step about how to accomplish the task
- Use tools to gather information and perform actions; never invent a tool's result
- Call one tool per reply, and use each result for the next step
- If a tool fails, try an alternative approach
- Continue until the task is complete or you cannot make progress
- Provide clear, actionable final answers
{token_rule}{format_rule}
{examples_section}"""

ILLUSTRATION_HEADING = (
    "EXAMPLE (its read tool is an illustration: call only the tools listed above)"
)
