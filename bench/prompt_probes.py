"""The 40 eval tasks on the embedded model with revision 6's texts changed for this process
only: the probes of docs/benchmarks.md ("What else was tried for the median") that were
not kept. Nothing here ships; each variant patches the prompt texts in memory.

    .venv/bin/python bench/prompt_probes.py --variant lean-prompt \\
        > bench/results/prompt-probe-lean-prompt.txt

Variants:
- `as-is`: revision 6 as it ships (the reference of the others, run the same way);
- `lean-prompt`: the system prompt without the rules a reply's format already says
  ("Think step by step", "If a tool fails, try an alternative approach", "Continue until
  ...", "Provide clear, actionable final answers", "Always respond with one valid JSON
  object"), without `is_final` and without "After each tool call you will receive an
  Observation" (about 110 of 428 prompt tokens fewer for a one-tool run);
- `few-word-thought`: the format asks for the thought "in a few words";
- `no-thought`: no `thought` in the format and the example (the reply is the action only);
- `reply-grammar`: `AgentOptions(reply_grammar=True)` with the defaults of today;
- `results-thought`: the answer's thought described as "what the tool results show";
- `results-example`: the example's last thought states both results (tried on
  two-cities-weather alone, `--only two-cities-weather`).

One line per task: id, passed, seconds, the calls made, the answer; then the count passed.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import re
from pathlib import Path

from loopwright import AgentOptions
from loopwright.evals._runner import run_task
from loopwright.evals._suite import load_suite
from loopwright.models import resolve_model
from loopwright.prompts import _builder, _revisions, _templates

ROOT = Path(__file__).resolve().parents[1]
REVISION = 6

LEAN_TEMPLATE = """\
{intro}

{format_section}

RULES:
- Use tools to gather information and perform actions; never invent a tool's result
- Call one tool per reply, and use each result for the next step
{token_rule}
{examples_section}{skill_section}{workspace_section}{available_files_section}
AVAILABLE TOOLS:
{tool_descriptions}"""
# one line as the model should reply, as in prompts/_templates.py
LEAN_FORMAT = """\
FORMAT: reply with exactly one JSON object on one line, and nothing else. To call a tool:
{"thought": "a short reason for this call", "action": "tool_name", "action_input": {"arg1": "value1"}}
When the task is complete:
{"thought": "a short reason", "final_answer": "your complete answer to the user"}"""
LEAN_ANSWER_FORMAT = """\
FORMAT: reply with exactly one JSON object on one line, and nothing else:
{"thought": "a short reason", "final_answer": "your complete answer to the user"}"""
LEAN_TOKEN_RULE = (
    "- Keep each reply short{limit}: quote only the part of a tool result you need, and "
    "read a big file in parts"
)


def _without_is_final(text: str) -> str:
    return text.replace(', "is_final": false', "").replace(', "is_final": true', "")


def _without_thought(text: str) -> str:
    return re.sub(r'"thought": "[^"]*", ', "", text)


def patch(variant: str) -> None:
    """Change revision 6's texts in this process for `variant`."""
    texts = _revisions.REVISIONS[REVISION].texts
    if variant == "lean-prompt":
        texts = dataclasses.replace(
            texts,
            format=LEAN_FORMAT,
            answer_format=LEAN_ANSWER_FORMAT,
            examples=_without_is_final(texts.examples),
            answer_example=_without_is_final(texts.answer_example),
            workspace_example=_without_is_final(texts.workspace_example),
        )
        default, shipped = _templates.SYSTEM_PROMPT_TEMPLATE, _revisions.layout
        lean = lambda t, r: LEAN_TEMPLATE if t == default else shipped(t, r)  # noqa: E731
        setattr(_builder, "layout", lean)  # noqa: B010 (the builder's module-level name)
        _templates.TOKEN_RULE = LEAN_TOKEN_RULE
    elif variant == "few-word-thought":
        few = '"why, in a few words"'
        fmt = texts.format.replace('"a short reason for this call"', few)
        texts = dataclasses.replace(texts, format=fmt.replace('"a short reason"', few))
    elif variant == "no-thought":
        texts = dataclasses.replace(
            texts,
            format=_without_thought(texts.format),
            examples=_without_thought(texts.examples),
        )
    elif variant == "results-thought":
        fmt = texts.format.replace(
            '{"thought": "a short reason", "final_answer"',
            '{"thought": "what the tool results show", "final_answer"',
        )
        texts = dataclasses.replace(texts, format=fmt)
    elif variant == "results-example":
        both = '"notes.txt says buy milk and todo.txt says call Bob."'
        texts = dataclasses.replace(
            texts, examples=texts.examples.replace('"I have both files."', both)
        )
    revision = dataclasses.replace(_revisions.REVISIONS[REVISION], texts=texts)
    _revisions.REVISIONS[REVISION] = revision


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    variants = [
        "as-is",
        "lean-prompt",
        "few-word-thought",
        "no-thought",
        "reply-grammar",
        "results-thought",
        "results-example",
    ]
    parser.add_argument("--variant", choices=variants, default="as-is")
    parser.add_argument("--only", default="", help="comma-separated task ids")
    args = parser.parse_args()
    patch(args.variant)
    options = AgentOptions(reply_grammar=args.variant == "reply-grammar")
    suite = load_suite(ROOT / "evals")
    model = resolve_model("local")
    only = {i for i in args.only.split(",") if i}
    passed = ran = 0
    for task in suite.tasks:
        if only and task.id not in only:
            continue
        outcome = await run_task(task, suite, model, options)
        ran, passed = ran + 1, passed + outcome.passed
        answer = repr(outcome.answer)[:100]
        print(task.id, outcome.passed, outcome.wall_s, outcome.tool_calls, answer, flush=True)
    print("PASSED", passed, "of", ran)


if __name__ == "__main__":
    asyncio.run(main())
