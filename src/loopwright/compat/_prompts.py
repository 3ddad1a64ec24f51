"""Seed 002's prompt contract: `AUTONOMOUS_SKILL_SYSTEM_PROMPT` and its `PromptBuilder`.

The template is the seed's, verbatim. `PromptBuilder` is the native one
(`loopwright.prompts.PromptBuilder`) with the seed's method signatures on top: any skill
object with `.metadata.name` and `.content`, any tool object with `name`, `description`
and `parameters`, any context with `available_files` and `skill_dir`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from loopwright.errors import ConfigurationError
from loopwright.messages import ToolSpec
from loopwright.prompts import PromptBuilder as NativePromptBuilder
from loopwright.prompts._builder import template_fields

AUTONOMOUS_SKILL_SYSTEM_PROMPT = """
You are executing the '{skill_name}' skill autonomously.

SKILL INSTRUCTIONS:
{skill_content}

{available_files_section}

AVAILABLE TOOLS:
{tool_descriptions}

EXECUTION FORMAT:
You must respond in JSON format with one of these structures:

1. When you need to call a tool:
{{
    "thought": "Your reasoning about what to do next",
    "action": "tool_name",
    "action_input": {{"arg1": "value1", "arg2": "value2"}},
    "is_final": false
}}

2. When you have completed the task:
{{
    "thought": "Your final reasoning",
    "final_answer": "Your complete response to the user",
    "is_final": true
}}

RULES:
- Think step by step about how to accomplish the task
- Use tools to gather information and perform actions
- If a tool fails, try an alternative approach
- Continue until the task is complete or you cannot make progress
- Provide clear, actionable final answers
- Always respond with valid JSON in the format above

Current iteration: {iteration}/{max_iterations}
"""
"""Seed 002's template, verbatim (literal JSON braces doubled for `str.format`)."""


def _as_spec(tool: Any) -> tuple[ToolSpec, Any]:
    """(a ToolSpec for the native formatter, the parameters if they are not a JSON schema)."""
    spec = getattr(tool, "spec", None)
    if isinstance(spec, ToolSpec):  # a loopwright Tool
        return spec, None
    parameters = getattr(tool, "parameters", None)
    schema = parameters if isinstance(parameters, dict) else {}
    spec = ToolSpec(str(tool.name), str(getattr(tool, "description", "") or ""), schema)
    shown_raw = parameters if parameters and not schema.get("properties") else None
    return spec, shown_raw


SEED_FIELDS = (
    "skill_name",
    "skill_content",
    "available_files_section",
    "tool_descriptions",
    "iteration",
    "max_iterations",
)
"""What `build_system_prompt` fills in (seed 002's placeholders)."""


class PromptBuilder(NativePromptBuilder):
    """Builds system prompts for autonomous skill execution (seed 002's signatures).

    `template` (seed 002's `AUTONOMOUS_SKILL_SYSTEM_PROMPT` by default, or one of your own
    with its placeholders, `{iteration}` included) is what `build_system_prompt` renders, as
    written. The native `build()` uses it too, without its `{iteration}` line (docs/seeds.md).
    """

    def __init__(self, template: str = AUTONOMOUS_SKILL_SYSTEM_PROMPT) -> None:
        super().__init__(template)
        unfilled = sorted(template_fields(template) - set(SEED_FIELDS))
        self.written: str | None = None if unfilled else template
        """The template as given, when build_system_prompt can fill every placeholder."""
        self.unfilled = unfilled

    def build_system_prompt(
        self,
        skill: Any,
        tool_descriptions: str,
        available_files_section: str,
        iteration: int,
        max_iterations: int,
    ) -> str:
        """The template filled in as written; `skill` is anything with `.metadata.name` and
        `.content`."""
        if self.written is None:
            raise ConfigurationError(
                f"system prompt template: build_system_prompt fills only seed 002's "
                f"placeholders ({', '.join(SEED_FIELDS)}), not {{{self.unfilled[0]}}}"
            )
        return self.written.format(
            skill_name=skill.metadata.name,
            skill_content=skill.content,
            available_files_section=available_files_section,
            tool_descriptions=tool_descriptions,
            iteration=iteration,
            max_iterations=max_iterations,
        )

    def format_tool_descriptions(
        self, tools: Iterable[Any], allowed_tools: Iterable[str] | None = None
    ) -> str:
        """`- name: description` per tool, and `  Parameters: ...` when it has parameters.

        An empty `allowed_tools` filters nothing, as in the seed (`if allowed_tools and ...`).
        """
        allowed = list(allowed_tools) if allowed_tools else None
        lines: list[str] = []
        for tool in tools:
            spec, shown_raw = _as_spec(tool)
            text = super().format_tool_descriptions([spec], allowed)
            if text:
                lines.append(text)
                if shown_raw is not None:
                    lines.append(f"  Parameters: {shown_raw}")
        return "\n".join(lines)

    def build_available_files_section(self, context: Any, skill_dir: Any = None) -> str:
        """The seed's section from a context with `available_files` and `skill_dir`
        (`""` when there are none); the native `(available_files, skill_dir)` call works too."""
        if skill_dir is None and hasattr(context, "available_files"):
            files, folder = context.available_files, getattr(context, "skill_dir", "")
        else:
            files, folder = context, skill_dir or ""
        return super().build_available_files_section(files or {}, folder)
